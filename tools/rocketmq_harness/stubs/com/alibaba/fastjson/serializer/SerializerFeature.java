package com.alibaba.fastjson.serializer;
public enum SerializerFeature { PrettyFormat, WriteMapNullValue, WriteNullListAsEmpty, SortField }
