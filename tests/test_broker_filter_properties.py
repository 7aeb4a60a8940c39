"""Property-based tests for SQL92 filtering.

* Random well-formed selectors over a clean subset (numbers compared with numeric properties,
  strings with string properties, property on the left) are evaluated by pymq_ref and by a tiny
  independent reference written here: Kleene three-valued logic over Python values.
* No exception escapes: random text and random token soups either compile or raise
  FilterSyntaxError; evaluating whatever compiled over random property maps returns
  True/False/None or raises FilterTypeError — nothing else.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pymq_ref.broker.filter import FilterSyntaxError, FilterTypeError, compile_sql92

NUM_PROPS = ["n1", "n2", "n3"]
STR_PROPS = ["s1", "s2"]
STRINGS = ["x", "y", "it's", ""]
SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# ---------------------------------------------------------------- reference model
# An expression is a tuple tree; render() gives selector text, ref() the Kleene value.


def kleene_and(a, b):
    if a is False or b is False:
        return False
    return None if a is None or b is None else True


def kleene_or(a, b):
    if a is True or b is True:
        return True
    return None if a is None or b is None else False


def kleene_not(a):
    return None if a is None else not a


def quote(s: str) -> str:
    return "'" + s.replace("'", "''") + "'"


def num_text(v) -> str:
    if isinstance(v, float):
        return repr(v)
    return str(v) if v >= 0 else f"-{-v}"


def render(e) -> str:
    tag = e[0]
    if tag == "cmp":
        _, prop, op, lit = e
        return f"{prop} {op} {quote(lit) if isinstance(lit, str) else num_text(lit)}"
    if tag == "between":
        _, prop, neg, lo, hi = e
        return f"{prop} {'NOT ' if neg else ''}BETWEEN {num_text(lo)} AND {num_text(hi)}"
    if tag == "in":
        _, prop, neg, items = e
        return f"{prop} {'NOT ' if neg else ''}IN ({', '.join(map(quote, items))})"
    if tag == "isnull":
        _, prop, neg = e
        return f"{prop} IS {'NOT ' if neg else ''}NULL"
    if tag == "const":
        return {True: "TRUE", False: "FALSE", None: "NULL"}[e[1]]
    if tag == "not":
        return f"NOT ({render(e[1])})"
    return f"({render(e[1])}) {tag.upper()} ({render(e[2])})"


def ref(e, props: dict[str, str]):
    tag = e[0]
    if tag == "cmp":
        _, prop, op, lit = e
        raw = props.get(prop)
        if raw is None:
            return None
        v = raw if isinstance(lit, str) else int(raw)
        return {"=": v == lit, "<>": v != lit, ">": v > lit, ">=": v >= lit, "<": v < lit, "<=": v <= lit}[op]
    if tag == "between":
        _, prop, neg, lo, hi = e
        raw = props.get(prop)
        if raw is None:
            return None
        inside = lo <= int(raw) <= hi
        return not inside if neg else inside
    if tag == "in":
        _, prop, neg, items = e
        raw = props.get(prop)
        if raw is None:
            return None
        return (raw in items) != neg
    if tag == "isnull":
        _, prop, neg = e
        return (props.get(prop) is None) != neg
    if tag == "const":
        return e[1]
    if tag == "not":
        return kleene_not(ref(e[1], props))
    a, b = ref(e[1], props), ref(e[2], props)
    return kleene_and(a, b) if tag == "and" else kleene_or(a, b)


nums = st.one_of(st.integers(-6, 6), st.integers(-6, 6).map(lambda i: i + 0.5), st.integers(3_000_000_000, 3_000_000_003))
num_cmp = st.tuples(st.just("cmp"), st.sampled_from(NUM_PROPS), st.sampled_from(["=", "<>", ">", ">=", "<", "<="]), nums)
str_cmp = st.tuples(st.just("cmp"), st.sampled_from(STR_PROPS), st.sampled_from(["=", "<>"]), st.sampled_from(STRINGS))
between = st.tuples(st.integers(-6, 6), st.integers(0, 6)).flatmap(
    lambda p: st.tuples(st.just("between"), st.sampled_from(NUM_PROPS), st.booleans(), st.just(p[0]), st.just(p[0] + p[1])))
in_list = st.tuples(st.just("in"), st.sampled_from(STR_PROPS), st.booleans(),
                    st.lists(st.sampled_from(STRINGS), min_size=1, max_size=6))
is_null = st.tuples(st.just("isnull"), st.sampled_from(NUM_PROPS + STR_PROPS), st.booleans())
const = st.tuples(st.just("const"), st.sampled_from([True, False, None]))
leaf = st.one_of(num_cmp, str_cmp, between, in_list, is_null, const)
expressions = st.recursive(
    leaf,
    lambda sub: st.one_of(st.tuples(st.just("not"), sub), st.tuples(st.sampled_from(["and", "or"]), sub, sub)),
    max_leaves=12)
prop_maps = st.fixed_dictionaries({}, optional={
    **{p: st.integers(-8, 8).map(str) for p in NUM_PROPS},
    **{p: st.sampled_from(STRINGS + ["z"]) for p in STR_PROPS},
})


@SETTINGS
@given(expressions, st.lists(prop_maps, min_size=1, max_size=5))
def test_evaluator_agrees_with_kleene_reference(expr, maps):
    text = render(expr)
    compiled = compile_sql92(text, strict=True)
    for props in maps:
        expected = ref(expr, props)
        assert compiled.evaluate(props) is expected, (text, props)
        assert compiled.matches(props) is (expected is True)


@SETTINGS
@given(expressions)
def test_java_string_is_stable_and_reparse_is_identical(expr):
    text = render(expr)
    a, b = compile_sql92(text), compile_sql92("  " + text + "\n")
    assert a.root == b.root and a.java_string() == b.java_string()


# ---------------------------------------------------------------- no exception escapes

TOKENS = ["a", "b", "TAGS", "x_1", "$p", "3", "0", "3L", "2147483648", "99999999999999999999", "2.5", ".5",
          "5.", "1e3", "0.0", "1e999", "'x'", "'it''s'", "''", "'", "TRUE", "FALSE", "NULL", "AND", "OR", "NOT",
          "IN", "IS", "BETWEEN", "LIKE", "CONTAINS", "=", "<>", ">", ">=", "<", "<=", "(", ")", ",", "+", "-",
          "--", "/*", "*/", "~", '"', ".", "\n", "\t", "\u00a0", "\u4f60", "\U0001F600"]
VALUE_POOL = ["3", "3.5", "-0", "abc", "true", "", " 3", "NaN", "1e3", "2147483648", "0x1p3", "\u0663", "x"]
any_props = st.one_of(st.none(), st.dictionaries(st.sampled_from(["a", "b", "TAGS", "x_1", "$p"]),
                                                 st.one_of(st.sampled_from(VALUE_POOL), st.text(max_size=5))))


def compile_or_syntax_error(text: str):
    try:
        compiled = compile_sql92(text)
    except FilterSyntaxError as e:
        assert e.expression == text
        assert 0 <= e.position <= len(text) and e.column >= 1 and e.line >= 1
        assert "^" in str(e) and e.kind in ("lexical", "syntax", "semantic") and e.expected
        return None
    assert compiled.ignored_from is None or 0 <= compiled.ignored_from < len(text)
    return compiled


def evaluate_or_type_error(compiled, props):
    try:
        assert compiled.evaluate(props) in (True, False, None)
    except FilterTypeError as e:
        assert e.reason


@SETTINGS
@given(st.text(max_size=40), any_props)
def test_random_text_never_crashes(text, props):
    compiled = compile_or_syntax_error(text)
    if compiled is not None:
        evaluate_or_type_error(compiled, props)


@SETTINGS
@given(st.lists(st.sampled_from(TOKENS), max_size=14), st.sampled_from([" ", ""]), st.lists(any_props, max_size=3))
def test_random_token_soup_never_crashes(tokens, sep, maps):
    compiled = compile_or_syntax_error(sep.join(tokens))
    if compiled is not None:
        for props in maps:
            evaluate_or_type_error(compiled, props)
    try:
        compile_sql92(sep.join(tokens), strict=True)
    except FilterSyntaxError:
        pass


@SETTINGS
@given(expressions, st.lists(st.sampled_from(TOKENS), min_size=1, max_size=3))
def test_mutated_valid_expressions_never_crash(expr, junk):
    text = render(expr)
    for mutated in (text + " " + " ".join(junk), " ".join(junk) + " " + text, text.replace("(", " ".join(junk), 1)):
        compiled = compile_or_syntax_error(mutated)
        if compiled is not None:
            evaluate_or_type_error(compiled, {"n1": "3", "s1": "x"})
