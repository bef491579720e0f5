"""The evidence-3 checks: each fires on its shapes, stays silent on the near misses, and
its span points at the right characters of the formal statement."""

from __future__ import annotations

import pytest

from app.vocabulary import Severity
from tests.support.evidence_checks import findings, spanned

# --- binder_default -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("formal", "span"),
    [
        ("theorem t (n : ℕ := 5) (h : 0 < n) : n = 5 := by sorry", "(n : ℕ := 5)"),
        ("lemma t {k : ℕ}\n    (x := 3) (y : ℝ) : x = 3 := sorry", "(x := 3)"),
        # ProofNet Ireland-Rosen 2.4 as published: a definition written as a default.
        ("theorem t {a : ℤ} (ha : a ≠ 0)\n  (f_a := sorry", "(f_a := sorry"),
    ],
)
def test_binder_default_fires_on_a_theorem_default(formal: str, span: str) -> None:
    (finding,) = findings("binder_default", formal)
    assert finding.severity is Severity.FLAG
    assert spanned(formal, finding) == span
    assert "optional argument" in finding.message


@pytest.mark.parametrize(
    "formal",
    [
        "def f (n : ℕ := 5) : ℕ := n",
        "abbrev g (n : ℕ := 5) : ℕ := n\ntheorem t (n : ℕ) : g n = n := by sorry",
        "theorem t (h : 1 = 1 := by rfl) : True := sorry",  # an auto-param is a hypothesis
        "theorem t (a : ℕ → ℚ) (h : ∀ k, let r := a k; r = 1) : a 0 = 1 := by sorry",
        "theorem t (f : S → ℕ) (h : f { x := 1 } = 2) : True := by sorry",
        "theorem t (n : ℕ) (h : n = 5) : n + 0 = 5 := by sorry",
    ],
)
def test_binder_default_is_silent_on_definitions_auto_params_and_lets(formal: str) -> None:
    assert findings("binder_default", formal) == []


# --- function_space_distance ----------------------------------------------------------


@pytest.mark.parametrize(
    ("formal", "span"),
    [
        ("theorem t (A B : ℝ × ℝ) (h : dist A B = 1) : A ≠ B := by sorry", "dist"),
        ("theorem t (p q : Fin 2 → ℝ) : Euclidean.dist p q ≥ 0 := by sorry", "Euclidean.dist"),
        ("theorem t (x : Fin 3 → ℝ) (y : Fin 3 → ℝ) : ‖x - y‖ ≤ 1 := by sorry", "‖"),
        ("theorem t (r : ℝ) : Metric.ball (0 : Fin 2 → ℝ) r = ∅ := by sorry", "Metric.ball"),
        # CombiBench imo_2015_p1 before its fix: points drawn from a `Set (ℝ × ℝ)`.
        ("def b (S : Set (ℝ × ℝ)) : Prop :=\n  ∀ A ∈ S, ∀ B ∈ S, dist A B = 1", "dist"),
        # CombiBench brualdi_ch3_18 before its fix: a function into a product, applied.
        ("theorem t (P : Fin 5 → ℝ × ℝ) : ∃ i j, Dist.dist (P i) (P j) ≤ 1 := by sorry",
         "Dist.dist"),
        # CombiBench imo_2018_p4 before its fix: a def's result type.
        ("def Site.asPoint (s : Site) : ℝ × ℝ := (1, 2)\n"
         "theorem t (x y : Site) : dist x.asPoint y.asPoint ≠ 5 := by sorry", "dist"),
    ],
)  # fmt: skip
def test_function_space_distance_fires_on_sup_metric_points(formal: str, span: str) -> None:
    found = findings("function_space_distance", formal)
    assert found and spanned(formal, found[0]) == span
    assert "EuclideanSpace" in found[0].message


@pytest.mark.parametrize(
    "formal",
    [
        "theorem t (A B : EuclideanSpace ℝ (Fin 2)) : dist A B = 1 := by sorry",
        "theorem t (P : Fin 5 → EuclideanSpace ℝ (Fin 2)) : dist (P 0) (P 1) ≤ 1 := by sorry",
        # A sequence of reals: `a i` is a real number, whose distance is |a i - a j|.
        "theorem t (a : Fin 5 → ℝ) : dist (a 0) (a 1) ≤ 1 := by sorry",
        "theorem t (x y : ℝ) : dist x y = |x - y| := by sorry",
        "theorem t : dist A B = 1 := by sorry",  # no type written: unsure
        "theorem t (z w : ℂ) : ‖z - w‖ = 1 := by sorry",
    ],
)
def test_function_space_distance_is_silent_on_euclidean_and_real_points(formal: str) -> None:
    assert findings("function_space_distance", formal) == []


# --- measure_dimension ----------------------------------------------------------------

AREA = "Find the area of the triangle ABC in space."


def test_measure_dimension_fires_on_an_area_under_volume_in_three_dimensions() -> None:
    formal = (
        "theorem t (A B C : EuclideanSpace ℝ (Fin 3)) :\n"
        "    (MeasureTheory.volume (convexHull ℝ {A, B, C})).toReal = 6 := by sorry"
    )
    (finding,) = findings("measure_dimension", formal, AREA)
    assert spanned(formal, finding) == "MeasureTheory.volume"
    assert "μH[2]" in finding.message


@pytest.mark.parametrize(
    ("formal", "informal"),
    [
        ("theorem t (A B C : EuclideanSpace ℝ (Fin 2)) : volume (convexHull ℝ {A, B, C}) = 6",
         AREA),
        ("theorem t (S : Set (ℝ × ℝ)) : volume S = 6", AREA),
        # The volume of a solid in ℝ³ is what `volume` measures there.
        ("theorem t (S : Set (Fin 3 → ℝ)) : volume S = 6", "Find the volume of the solid."),
        # Both named: which one the statement means is unclear.
        ("theorem t (S : Set (Fin 3 → ℝ)) : volume S = 6", "The area and the volume agree."),
        ("theorem t (S : Set (Fin 3 → ℝ)) : μH[2] S = 6", AREA),
        ("theorem t (S : Set α) : volume S = 6", AREA),  # no dimension known
    ],
)  # fmt: skip
def test_measure_dimension_is_silent_when_the_dimensions_agree_or_are_unknown(
    formal: str, informal: str
) -> None:
    assert findings("measure_dimension", formal, informal) == []


# --- infinite_cardinality -------------------------------------------------------------


@pytest.mark.parametrize(
    ("formal", "span"),
    [
        ("theorem t (S : Set ℕ) (h : ∀ x ∈ S, 2 ∣ x) : S.ncard ≤ 3 := by sorry", "S.ncard"),
        ("theorem t : Set.ncard {n : ℕ | 3 ∣ n} = 0 := by sorry", "Set.ncard {n : ℕ | 3 ∣ n}"),
        ("theorem t (S : Set ℤ) : Even S.ncard := by sorry", "S.ncard"),
        ("theorem t (k : ℕ) : 5 > {x : ℝ | x ^ 2 < k}.ncard := by sorry",
         "{x : ℝ | x ^ 2 < k}.ncard"),
    ],
)  # fmt: skip
def test_infinite_cardinality_fires_where_an_infinite_set_satisfies_it(
    formal: str, span: str
) -> None:
    (finding,) = findings("infinite_cardinality", formal)
    assert spanned(formal, finding) == span
    assert "encard" in finding.message


@pytest.mark.parametrize(
    "formal",
    [
        "theorem t (S : Set ℕ) (hS : S.Finite) : S.ncard ≤ 3 := by sorry",
        "theorem t (S : Set ℕ) [Finite S] : S.ncard ≤ 3 := by sorry",
        "theorem t (S : Set ℕ) (hS : Set.Finite S) : S.ncard ≤ 3 := by sorry",
        "theorem t (S : Set α) [Fintype α] : S.ncard ≤ 3 := by sorry",
        "theorem t (S : Set ℕ) : S.ncard = 5 := by sorry",  # an infinite set fails it
        "theorem t : {x : Fin 5 | x.val < 3}.ncard ≤ 3 := by sorry",
        "theorem t (S : Finset ℕ) : S.card ≤ 3 := by sorry",
        "theorem t (S : Set ℕ) : S.encard ≤ 3 := by sorry",
    ],
)
def test_infinite_cardinality_is_silent_on_finite_sets_and_safe_claims(formal: str) -> None:
    assert findings("infinite_cardinality", formal) == []


# --- junk_value -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("formal", "informal", "span"),
    [
        ("theorem t (x : ℝ) (h : Real.sqrt x + 1 = 3) : x ^ 2 = 16 := by sorry",
         "If $\\sqrt{x} + 1 = 3$, show that $x^2 = 16$.", "Real.sqrt x"),
        ("theorem t (a b : ℝ) (h₀ : Real.logb 8 a + 1 = 5) : a ^ 2 = 1 := by sorry",
         "Given $\\log_8 a + 1 = 5$, find $a^2$.", "Real.logb 8 a"),
        ("theorem t (a b : ℝ) (h : a * b + 1 = 2) :\n  a / b + 1 ≤ a := by sorry",
         "Show that $\\frac{a}{b} + 1 \\le a$.", "/ b"),
        ("theorem t (x : ℝ) : x⁻¹ * 2 ≤ 3 := by sorry", "The reciprocal of x.", "x⁻¹"),
        ("theorem t (n : ℕ) (h : n < 50) : Nat.sqrt n ≤ 7 := by sorry",
         "Show that the square root of n is at most 7.", "Nat.sqrt n"),
    ],
)  # fmt: skip
def test_junk_value_fires_outside_the_domain(formal: str, informal: str, span: str) -> None:
    (finding,) = findings("junk_value", formal, informal)
    assert spanned(formal, finding) == span


SQRT = "If $\\sqrt{x} = 3$, then $x = 9$."


@pytest.mark.parametrize(
    ("formal", "informal"),
    [
        ("theorem t (x : ℝ) (hx : 0 ≤ x) (h : Real.sqrt x = 3) : x = 9 := by sorry", SQRT),
        ("theorem t (x : ℝ) (hx : 0 < x) (h : √x = 3) : x = 9 := by sorry", SQRT),
        ("theorem t (x : ℝ) (hx : x > 0) (h : Real.log x = 0) : x = 1 := by sorry",
         "If $\\log x = 0$ then $x = 1$."),
        ("theorem t (a b : ℝ) (hb : b ≠ 0) : a / b * b = a := by sorry", "$\\frac{a}{b} b = a$"),
        ("theorem t (a b : ℝ) (hb : b = 2) : a / b = a / 2 := by sorry", "$a/b = a/2$"),
        # The informal text does not speak of a square root.
        ("theorem t (x : ℝ) (h : Real.sqrt x = 3) : x = 9 := by sorry", "If s = 3 then x = 9."),
        # An expression argument: unsure, silent.
        ("theorem t (x : ℝ) (h : Real.sqrt (x ^ 2 + 1) = 3) : x = 9 := by sorry", SQRT),
        ("theorem t (a b : ℝ) (h : a / b ^ 3 = 27 / 4) : a = 1 := by sorry", "$\\frac{a}{b^3}$"),
        ("theorem t : Nat.sqrt 196 = 14 := by sorry", "The square root of 196 is 14."),
        ("theorem t (x : ℂ) (h : x⁻¹ = 2) : x = 1 / 2 := by sorry", "The reciprocal of x."),
    ],
)  # fmt: skip
def test_junk_value_is_silent_on_guarded_or_unclear_arguments(formal: str, informal: str) -> None:
    assert findings("junk_value", formal, informal) == []


# --- truncating_subtraction -----------------------------------------------------------

IMO_1982_P1 = (
    "theorem imo_1982_p1\n  (f : ℕ → ℕ)\n"
    "  (h₀ : ∀ m n, (0 < m ∧ 0 < n) → f (m + n) - f m - f n = 0 ∨ f (m + n) - f m - f n = 1)\n"
    "  (h₁ : f 2 = 0) :\n  f 1982 = 660 := by sorry"
)
DIFFERENCE = "Show that a - b is what it is."


def test_truncating_subtraction_fires_on_the_imo_1982_p1_hypothesis() -> None:
    found = findings("truncating_subtraction", IMO_1982_P1, "for all m, n: f(m+n)-f(m)-f(n)=0")
    assert found and spanned(IMO_1982_P1, found[0]) == ") - f"
    assert "ℤ" in found[0].message


def test_truncating_subtraction_fires_on_unordered_natural_variables() -> None:
    formal = "theorem t (a b : ℕ) (h : a - b ≤ 4) : a ≤ b + 4 := by sorry"
    (finding,) = findings("truncating_subtraction", formal, DIFFERENCE)
    assert spanned(formal, finding) == "a - b"


@pytest.mark.parametrize(
    ("formal", "informal"),
    [
        ("theorem t (a b : ℝ) (h : a - b ≤ 4) : a ≤ b + 4 := by sorry", DIFFERENCE),
        ("theorem t (a b : ℕ) (h : (a : ℤ) - b ≤ 4) : a ≤ b + 4 := by sorry", DIFFERENCE),
        ("theorem t (a b : ℕ) (hab : b ≤ a) (h : a - b ≤ 4) : a ≤ b + 4 := by sorry",
         DIFFERENCE),
        ("theorem t (a b : ℕ) (hab : a > b) (h : a - b ≤ 4) : a ≤ b + 4 := by sorry",
         DIFFERENCE),
        ("theorem t (n : ℕ) (h : 0 < n) : n - 1 < n := by sorry", "Show n - 1 < n."),
        ("theorem t (x y : ℕ) (h : x - y = 1) : x = y + 1 := by sorry", "If x - y = 1..."),
        ("theorem t (a b : ℕ) (h : a - b ≤ 4) : a ≤ b + 4 := by sorry", "Show it."),
        ("theorem t (f : ℕ → ℕ) (h : ∀ i, f i < f (i + 1)) : f (i + 1) - f i ≥ 1 := by sorry",
         DIFFERENCE),
    ],
)  # fmt: skip
def test_truncating_subtraction_is_silent_on_reals_casts_and_guards(
    formal: str, informal: str
) -> None:
    assert findings("truncating_subtraction", formal, informal) == []
