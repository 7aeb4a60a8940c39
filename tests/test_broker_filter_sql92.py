"""SQL92 selectors: every operator, NULL truth tables, Java type coercion, compile errors with a caret."""

from __future__ import annotations

import math

import pytest

from pymq_ref.broker.filter import FilterSyntaxError, FilterTypeError, compile_sql92
from pymq_ref.broker.filter.sql92.ast import And, BooleanCast, Compare, Constant, Equal, In, Negate, Not, Or, Property
from pymq_ref.broker.filter.sql92.java_values import (
    JavaLong, JavaNumberFormatError, boolean_value_of, compare_doubles, compare_strings, double_value_of,
    integer_value_of, java_double_to_string, long_value_of,
)
from pymq_ref.broker.filter.sql92.lexer import Kind, Lexer
from pymq_ref.errors import PymqError

PROPS = {"a": "3", "s": "abc", "f": "3.5", "TAGS": "TagA", "t": "true", "n": "-0.0", "z": "0"}


def ev(expr: str, props=PROPS):
    return compile_sql92(expr).evaluate(props)


# ---------------------------------------------------------------- an example table of SQL92 expressions

@pytest.mark.parametrize("expr", ["a = 3", "a = '3'", "a > 2.5", "a BETWEEN 1 AND 5", "a <> 4", "a = 3L",
                                  "TAGS = 'TagA' AND a >= 3", "a IN ('3','4')", "a NOT BETWEEN 5 AND 6",
                                  "b IS NULL"])
def test_spec_examples_match(expr):
    assert compile_sql92(expr).matches(PROPS) is True


@pytest.mark.parametrize("expr", ["b = 1", "A = 3", "NOT (b = 1)", "a NOT IN ('3')", "b IS NOT NULL"])
def test_spec_examples_do_not_match(expr):
    assert compile_sql92(expr).matches(PROPS) is False


def test_spec_example_evaluation_error():
    with pytest.raises(FilterTypeError) as ei:
        ev("f > 3")
    assert ei.value.left == "3.5" and ei.value.right == 3 and "NumberFormatException" in ei.value.reason


@pytest.mark.parametrize("expr", ["s > 'abb'", "s = NULL", "a > 0.0", "a BETWEEN 6 AND 5", "a = 3 OR"])
def test_spec_examples_compile_errors(expr):
    with pytest.raises(FilterSyntaxError):
        compile_sql92(expr)


# ---------------------------------------------------------------- operators

@pytest.mark.parametrize("expr,expected", [
    ("a = 3", True), ("a = 4", False), ("a <> 3", False), ("a <> 4", True),
    ("a > 2", True), ("a > 3", False), ("a >= 3", True), ("a >= 4", False),
    ("a < 4", True), ("a < 3", False), ("a <= 3", True), ("a <= 2", False),
    ("a > 2.9", True), ("a < 3.1", True), ("f > 3.4", True), ("f <= 3.5", True),
    ("a BETWEEN 3 AND 3", True), ("a BETWEEN 4 AND 9", False), ("a NOT BETWEEN 4 AND 9", True),
    ("a NOT BETWEEN 1 AND 9", False), ("a IN ('1', '3')", True), ("a IN ('1')", False),
    ("a NOT IN ('1')", True), ("a NOT IN ('3', 'x', 'y', 'z', 'w', 'v')", False),
    ("a IS NULL", False), ("a IS NOT NULL", True), ("zz IS NULL", True), ("zz IS NOT NULL", False),
    ("s = 'abc'", True), ("s <> 'abd'", True), ("s = 'ABC'", False),
    ("a = 3 AND s = 'abc'", True), ("a = 3 AND s = 'x'", False), ("a = 4 OR s = 'abc'", True),
    ("a = 4 OR s = 'x'", False), ("NOT a = 4", False), ("NOT (a = 4)", True), ("TRUE", True),
    ("FALSE", False), ("NULL", None), ("NOT TRUE", False), ("NOT NULL", None),
    ("a > -1", True), ("a > - -4", False), ("a = +3", True), ("-3 < a", True),
    ("a = 3e0", True), ("a = 300E-2", True), ("a = .3e1", True), ("a = 3.", True),
    ("(a = 3 OR a = 4) AND (s IN ('abc') OR f > 100)", True),
    ("a = 3 /* comment */ AND -- line comment\n s = 'abc'", True),
    ("a iS nOt NuLl aNd s In ('abc')", True),
])
def test_operators(expr, expected):
    assert ev(expr) is expected


def test_keywords_case_insensitive_names_case_sensitive():
    assert ev("tags = 'TagA'") is None  # the property is TAGS
    assert ev("TAGS = 'TagA' and A is null") is True


def test_desugaring_matches_rocketmq_tree():
    assert compile_sql92("a <> 1").root == Not(Equal(Property("a"), Constant(1)))
    assert compile_sql92("a IS NOT NULL").root == Not(Equal(Property("a"), Constant(None)))
    assert compile_sql92("a BETWEEN 1 AND 2").root == And(Compare(">=", Property("a"), Constant(1)),
                                                          Compare("<=", Property("a"), Constant(2)))
    assert compile_sql92("a NOT BETWEEN 1 AND 2").root == Or(Compare("<", Property("a"), Constant(1)),
                                                             Compare(">", Property("a"), Constant(2)))
    assert compile_sql92("a").root == BooleanCast(Property("a"))
    assert compile_sql92("a IN ('x')").root == In(Property("a"), ("x",), False)
    assert compile_sql92("-a > 1").root == Compare(">", Negate(Property("a")), Constant(1))
    # NOT binds tighter than comparisons (RocketMQ grammar): NOT a = 1 is (NOT a) = 1
    assert compile_sql92("NOT a = 1").root == Equal(Not(BooleanCast(Property("a"))), Constant(1))


def test_java_string_like_rocketmq_to_string():
    e = compile_sql92("a = 3 AND (b <> 'it''s' OR c IN ('x','y')) AND d IS NULL AND NOT e AND f > -2.5E10")
    assert e.java_string() == ("(((((a == 3) && ((NOT (b == 'it''s')) || c IN ( x, y ))) && (d == NULL)) "
                               "&& (NOT e)) && (f > (- 2.5E10)))")


# ---------------------------------------------------------------- three-valued logic

V = {"T": "TRUE", "F": "FALSE", "N": "NULL"}
PY = {"T": True, "F": False, "N": None}
AND_TABLE = {("T", "T"): "T", ("T", "F"): "F", ("T", "N"): "N", ("F", "T"): "F", ("F", "F"): "F",
             ("F", "N"): "F", ("N", "T"): "N", ("N", "F"): "F", ("N", "N"): "N"}
OR_TABLE = {("T", "T"): "T", ("T", "F"): "T", ("T", "N"): "T", ("F", "T"): "T", ("F", "F"): "F",
            ("F", "N"): "N", ("N", "T"): "T", ("N", "F"): "N", ("N", "N"): "N"}


@pytest.mark.parametrize("l,r", list(AND_TABLE))
def test_and_truth_table(l, r):
    assert ev(f"{V[l]} AND {V[r]}") is PY[AND_TABLE[l, r]]
    # the same with NULL produced by a missing property instead of the literal
    lhs = "zz = 1" if l == "N" else V[l]
    rhs = "zz = 1" if r == "N" else V[r]
    assert ev(f"{lhs} AND {rhs}") is PY[AND_TABLE[l, r]]


@pytest.mark.parametrize("l,r", list(OR_TABLE))
def test_or_truth_table(l, r):
    assert ev(f"{V[l]} OR {V[r]}") is PY[OR_TABLE[l, r]]
    lhs = "zz > 1" if l == "N" else V[l]
    rhs = "zz > 1" if r == "N" else V[r]
    assert ev(f"{lhs} OR {rhs}") is PY[OR_TABLE[l, r]]


@pytest.mark.parametrize("v,expected", [("T", False), ("F", True), ("N", None)])
def test_not_truth_table(v, expected):
    assert ev(f"NOT {V[v]}") is expected
    assert ev("NOT (zz = 1)") is None


def test_short_circuit_skips_errors():
    # the right side would raise (s is not a number), but the left decides first
    assert ev("FALSE AND s > 1") is False
    assert ev("TRUE OR s > 1") is True
    with pytest.raises(FilterTypeError):
        ev("s > 1 AND FALSE")  # left first: it raises before FALSE is seen
    assert ev("zz > s") is None  # a NULL left side stops before the right side


def test_missing_property_nulls():
    assert ev("zz = 1") is None
    assert ev("zz <> 1") is None
    assert ev("zz > 1") is None
    assert ev("1 < zz") is None
    assert ev("zz IN ('x')") is None
    assert ev("zz NOT IN ('x')") is None
    assert ev("zz BETWEEN 1 AND 2") is None
    assert ev("zz") is None
    assert ev("NOT zz") is None
    assert ev("-zz > 1") is None


def test_equality_null_asymmetry():
    """doCreateEqual: only-left-null → NULL, but only-right-null → FALSE; both null → TRUE."""
    assert ev("zz = a") is None
    assert ev("a = zz") is False
    assert ev("3 = zz") is False
    assert ev("3 <> zz") is True  # NOT FALSE: a selector on a missing property that matches!
    assert ev("zz = yy") is True
    assert ev("zz IS NULL") is True


def test_null_on_none_properties():
    assert compile_sql92("a IS NULL").evaluate(None) is True
    assert compile_sql92("a = 1").evaluate(None) is None
    assert compile_sql92("TRUE").evaluate({}) is True


# ---------------------------------------------------------------- type coercion (ComparisonExpression.__compare)

@pytest.mark.parametrize("expr,props,expected", [
    ("a = 3", {"a": "+3"}, True),  # Integer.valueOf accepts a plus sign
    ("a = 3", {"a": "\u0663"}, True),  # ... and any Unicode decimal digit (ARABIC-INDIC THREE)
    ("a = 3", {"a": "03"}, True),
    ("a = 3000000000", {"a": "3000000000"}, True),  # Long literal → Long.valueOf
    ("a > 2.5", {"a": " 3 "}, True),  # Double.valueOf trims
    ("a > 2.5", {"a": "3f"}, True),  # ... and accepts a float suffix
    ("a > 2.5", {"a": "0x1p2"}, True),  # ... and hex floats
    ("a > 2.5", {"a": "Infinity"}, True),
    ("a > 2.5", {"a": "NaN"}, True),  # Double.compareTo: NaN is above everything
    ("a = 2.5", {"a": "NaN"}, False),
    ("a < b", {"a": "-0.0", "b": "0"}, True),  # two strings → both Double.valueOf; -0.0 < 0.0 in Java
    ("a < b", {"a": "2", "b": "10"}, True),  # numeric, not lexicographic
    ("a = b", {"a": "2", "b": "2.0"}, False),  # two strings: String.equals, then compareTo
    ("a = TRUE", {"a": "TRUE"}, True),  # String vs Boolean: Boolean.valueOf (case-insensitive)
    ("a = FALSE", {"a": "yes"}, True),  # Boolean.valueOf("yes") is false!
    ("a = TRUE", {"a": "yes"}, False),
    ("'x' = TRUE", {}, False),
    ("TRUE = FALSE", {}, False),
    ("1 = TRUE", {}, False),  # a number vs a Boolean compares as "less": never equal
    ("(a = 1) = 1", {"a": "1"}, False),
    ("a = 1 = TRUE", {"a": "1"}, True),
    ("a = 3.0", {"a": "3"}, True),
    ("3 = 3.0", {}, True),  # Integer widened to Double
    ("3000000000 > 3", {}, True),  # Integer widened to Long
    ("2.5 < 3000000000", {}, True),
    ("a = 2147483647", {"a": "2147483647"}, True),
])
def test_coercion(expr, props, expected):
    assert ev(expr, props) is expected


@pytest.mark.parametrize("expr,props,why", [
    ("a = 3", {"a": "abc"}, "NumberFormatException"),
    ("a = 3", {"a": "3.5"}, "NumberFormatException"),
    ("a = 3", {"a": " 3"}, "NumberFormatException"),  # Integer.valueOf does not trim
    ("a = 3", {"a": "1_0"}, "NumberFormatException"),  # nor accept underscores (Python int() would)
    ("a = 3", {"a": "2147483648"}, "NumberFormatException"),  # out of Integer range
    ("a = 2.5", {"a": "inf"}, "NumberFormatException"),
    ("a > b", {"a": "x", "b": "1"}, "illegal to compare string"),
    ("TRUE = a", {"a": "true"}, "ClassCastException"),  # Java converts the wrong operand
    ("(a = 1) = 'true'", {"a": "1"}, "ClassCastException"),
])
def test_evaluation_errors(expr, props, why):
    with pytest.raises(FilterTypeError) as ei:
        ev(expr, props)
    assert why in ei.value.reason
    assert isinstance(ei.value, PymqError)


def test_negate():
    assert ev("-a = -3", {"a": "3"}) is None  # unary minus of a String is NULL
    assert ev("- - 3 = 3") is True
    assert ev("-2147483648 = -2147483648") is True
    assert compile_sql92("-2147483648 = 1").root.left.operand.value.__class__ is JavaLong
    assert ev("-'x' = a") is None
    assert ev("-TRUE = a") is None


def test_literal_types():
    assert type(compile_sql92("a = 3L").root.right.value) is int  # fits an int → Integer
    assert isinstance(compile_sql92("a = 2147483648").root.right.value, JavaLong)
    assert isinstance(compile_sql92("a = 9223372036854775807").root.right.value, JavaLong)
    assert compile_sql92("a = 1e3").root.right.value == 1000.0
    assert compile_sql92("a = 'it''s'").root.right.value == "it's"
    assert compile_sql92("a = 0L").ignored_tail == "L"  # "0" cannot carry the L suffix


# ---------------------------------------------------------------- Java value helpers

def test_java_parsers():
    assert integer_value_of("-2147483648") == -2147483648
    assert long_value_of("9223372036854775807") == 2**63 - 1
    for bad in ["", "+", "-", "1.0", " 1", "1 ", "٣x", "１_"]:
        with pytest.raises(JavaNumberFormatError):
            integer_value_of(bad)
    assert integer_value_of("１２") == 12  # FULLWIDTH digits are Nd
    with pytest.raises(JavaNumberFormatError):
        integer_value_of("\U0001D7CE")  # MATHEMATICAL BOLD DIGIT ZERO: outside the BMP → two units
    assert double_value_of("\t1.5d\n") == 1.5 and double_value_of("-.5") == -0.5 and double_value_of("5.") == 5.0
    assert math.isnan(double_value_of("NaN")) and double_value_of("-Infinity") == -math.inf
    for bad in ["inf", "nan", "1e", "1_0", ".", "0x10", "NaNf", "１", "+-1"]:
        with pytest.raises(JavaNumberFormatError):
            double_value_of(bad)
    assert boolean_value_of("tRuE") and not boolean_value_of("1") and not boolean_value_of("t")


def test_java_ordering_helpers():
    assert compare_doubles(-0.0, 0.0) == -1 and compare_doubles(math.nan, math.inf) == 1
    assert compare_doubles(math.nan, math.nan) == 0
    assert compare_strings("\uffff", "\U00010000") == 1  # UTF-16: the surrogate D800 < FFFF
    assert java_double_to_string(1e10) == "1.0E10" and java_double_to_string(0.001) == "0.001"
    assert java_double_to_string(1234567.0) == "1234567.0" and java_double_to_string(1.5e-5) == "1.5E-5"


# ---------------------------------------------------------------- compile errors

def err(expr: str, **kw) -> FilterSyntaxError:
    with pytest.raises(FilterSyntaxError) as ei:
        compile_sql92(expr, **kw)
    return ei.value


def test_error_points_at_column_with_caret():
    e = err("a = 3 AND b >")
    assert (e.column, e.kind, e.found) == (14, "syntax", "end of expression")
    assert "a property name" in e.expected
    assert str(e).endswith("    a = 3 AND b >\n                 ^")
    assert e.expression == "a = 3 AND b >"
    e = err("a = 3 AND\n  b IN (1)")
    assert (e.line, e.column) == (2, 9) and "string literal" in e.expected
    assert str(e).splitlines()[-2:] == ["      b IN (1)", "            ^"]


@pytest.mark.parametrize("expr,column,kind,fragment", [
    ("", 1, "syntax", "a property name"),
    ("   ", 4, "syntax", "a property name"),
    ("a = 'x", 5, "lexical", "closing '"),
    ("a = 1 ~", 7, "lexical", "operator"),
    ("/* c a = 3", 1, "lexical", "'*/'"),
    ("a\u00a0= 3", 2, "lexical", "operator"),
    ("a = \"x\"", 5, "lexical", "operator"),
    ("a IS TRUE", 6, "syntax", "NULL or NOT NULL"),
    ("a IS NOT TRUE", 10, "syntax", "NULL after IS NOT"),
    ("a NOT LIKE 'x'", 7, "syntax", "BETWEEN or IN"),
    ("a BETWEEN 1 OR 2", 13, "syntax", "AND between"),
    ("a IN ('x' 'y')", 11, "syntax", "',' or ')'"),
    ("a IN ()", 7, "syntax", "string literal"),
    ("(a = 3", 7, "syntax", "')'"),
    ("a = 3 OR OR b", 10, "syntax", "a property name"),
    ("a = NULL", 5, "semantic", "non-NULL"),
    ("NULL <> a", 1, "semantic", "non-NULL"),
    ("TRUE = 1", 8, "semantic", "boolean literal"),
    ("s > 'abb'", 5, "semantic", "a number"),
    ("a > TRUE", 5, "semantic", "a number"),
    ("a > 1 > 0", 3, "semantic", "a number"),
    ("a BETWEEN 6 AND 5", 3, "semantic", "low bound"),
    ("a BETWEEN NULL AND 1", 11, "semantic", "non-NULL"),
    ("a NOT BETWEEN NULL AND 1", 15, "semantic", "a number"),
    ("a BETWEEN 'x' AND 'y'", 11, "semantic", "a number"),
    ("3 IN ('3')", 3, "semantic", "a property name before IN"),
    ("a IN ('3') IN ('4')", 12, "semantic", "a property name before IN"),
    ("NOT 3", 5, "semantic", "a condition"),
    ("1 AND a", 1, "semantic", "a condition"),
    ("3", 1, "semantic", "a condition"),
    ("'x'", 1, "semantic", "a condition"),
    ("-a", 1, "semantic", "a condition"),
    ("a = 9223372036854775808", 5, "semantic", "Long.MAX_VALUE"),
    ("a > 0.0", 5, "semantic", "Double.MIN_VALUE"),
    ("a > 1e-400", 5, "semantic", "Double.MIN_VALUE"),
    ("a > 1e400", 5, "semantic", "finite"),
])
def test_compile_errors(expr, column, kind, fragment):
    e = err(expr)
    assert (e.column, e.kind) == (column, kind), str(e)
    assert fragment in e.expected, str(e)
    assert "^" in str(e).splitlines()[-1]


def test_trailing_input_ignored_like_rocketmq_or_rejected_when_strict():
    e = compile_sql92("a = 3 xyz")
    assert e.matches(PROPS) and e.ignored_from == 6 and e.ignored_tail == "xyz"
    like = compile_sql92("a LIKE '3'")
    assert like.root == BooleanCast(Property("a")) and like.matches(PROPS) is False
    assert any("LIKE" in w for w in like.warnings)
    contains = compile_sql92("a CONTAINS '3'")
    assert any("5.1.3" in w for w in contains.warnings)
    strict = err("a CONTAINS '3'", strict=True)
    assert strict.column == 3 and "5.1.3" in strict.reason
    assert err("a = 3 )", strict=True).column == 7
    assert compile_sql92("a = 3", strict=True).ignored_from is None
    assert compile_sql92("a = 3 ").warnings == ()


def test_lazy_lexing_like_javacc():
    """Only the tokens RocketMQ looks at are cut: one after the expression, two after IS/NOT."""
    assert compile_sql92("a = 1 x ~").ignored_tail == "x ~"
    err("a = 1 ~")
    err("a = 1 NOT x")  # NOT enters the comparison loop, then needs BETWEEN/IN
    err("a = 1 IS x")
    assert compile_sql92("a = 1 -- no line end").ignored_tail == "-- no line end"


def cut_all(text: str) -> list[tuple[Kind, str]]:
    lx, out = Lexer(text), []
    while (t := lx.next()).kind is not Kind.EOF:
        out.append((t.kind, t.value))
    return out


def test_lexer_longest_match_and_string_fallback():
    assert cut_all("5e 1.5e+3 NOTE not 007 0L 3l .5E1 x$_1") == [
        (Kind.DECIMAL, "5"), (Kind.ID, "e"), (Kind.FLOAT, "1.5e+3"), (Kind.ID, "NOTE"), (Kind.NOT, "not"),
        (Kind.DECIMAL, "0"), (Kind.DECIMAL, "0"), (Kind.DECIMAL, "7"), (Kind.DECIMAL, "0"), (Kind.ID, "L"),
        (Kind.DECIMAL, "3l"), (Kind.FLOAT, ".5E1"), (Kind.ID, "x$_1")]
    # a quote after a quote continues the literal as long as possible: 'a'' = ' is one string
    assert cut_all("'a'' = ' b") == [(Kind.STRING, "a' = "), (Kind.ID, "b")]
    assert cut_all("<><=>=<>=(,)+-") == [(Kind.NE, "<>"), (Kind.LE, "<="), (Kind.GE, ">="), (Kind.NE, "<>"),
                                         (Kind.EQ, "="), (Kind.LPAREN, "("), (Kind.COMMA, ","), (Kind.RPAREN, ")"),
                                         (Kind.PLUS, "+"), (Kind.MINUS, "-")]
    assert cut_all("-- c\r\nx /* y */ z --w") == [(Kind.ID, "x"), (Kind.ID, "z"), (Kind.MINUS, "-"),
                                                     (Kind.MINUS, "-"), (Kind.ID, "w")]
    # "'a''" alone: the longest complete literal is 'a', then an unterminated quote
    e = err("a = 'a''")
    assert e.kind == "lexical" and e.column == 8


def test_non_string_input():
    assert err(None).kind == "syntax"  # type: ignore[arg-type]


def test_parse_tree_diagram_labels_and_values():
    from pymq_ref.broker.filter.sql92.diagram import parse_tree

    compiled = compile_sql92("a BETWEEN 1 AND 5 AND NOT (s IN ('x'))")
    source = parse_tree(compiled).source
    assert "AND\n(from BETWEEN)" in source and ">=" in source and "IN ('x')" in source
    annotated = parse_tree(compiled, {"a": "3"}).source
    assert "= TRUE" in annotated and "= NULL" in annotated and "'3' (String)" in annotated
    assert "= error" in parse_tree(compile_sql92("a > 1"), {"a": "x"}).source


def test_properties_used_and_str():
    compiled = compile_sql92("b = 1 AND (a > 2 OR b IS NULL) AND TAGS IN ('x')")
    assert compiled.properties_used() == ("b", "a", "TAGS")
    assert str(compiled) == compiled.java_string()
