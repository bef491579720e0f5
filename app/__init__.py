"""FaithScreen: screens informal/formal (Lean 4) statement pairs for faithfulness."""

__version__ = "0.1.0"
