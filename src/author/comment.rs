//! Line comments in the target language, for the provenance header and filled regions.

/// The line-comment prefix of `language` (a plan's `Skeleton language`, or the target
/// file's extension when the plan names none).
pub fn prefix(language: &str) -> &'static str {
    match language.trim().to_ascii_lowercase().as_str() {
        "python" | "py" | "ruby" | "rb" | "shell" | "sh" | "bash" | "crystal" | "cr" | "yaml"
        | "yml" | "toml" | "perl" | "pl" | "r" | "elixir" | "ex" | "exs" | "nim" | "julia"
        | "jl" | "make" | "tcl" => "#",
        "clojure" | "clj" | "cljs" | "cljc" | "lisp" | "scheme" | "racket" => ";;",
        "sql" | "haskell" | "hs" | "lua" | "ada" => "--",
        "erlang" | "erl" => "%",
        _ => "//",
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn each_family_has_its_comment() {
        assert_eq!(super::prefix("Rust"), "//");
        assert_eq!(super::prefix("go"), "//");
        assert_eq!(super::prefix("python"), "#");
        assert_eq!(super::prefix("crystal"), "#");
        assert_eq!(super::prefix("clojure"), ";;");
        assert_eq!(super::prefix("erl"), "%");
    }
}
