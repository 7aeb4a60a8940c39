package com.alibaba.fastjson.annotation;
import java.lang.annotation.*;
/** harness stub of fastjson's annotation (only what rocketmq sources reference). */
@Retention(RetentionPolicy.RUNTIME) @Target({ElementType.METHOD, ElementType.FIELD, ElementType.PARAMETER})
public @interface JSONField { boolean serialize() default true; boolean deserialize() default true; String name() default ""; }
