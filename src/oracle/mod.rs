//! Operation histories and the built-in checkers.
