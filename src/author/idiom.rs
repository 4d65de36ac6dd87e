//! The language of an authored target, and the workload region written as real code
//! in that language's idiom where faultline knows how (Rust, Go, Python, shell):
//! running the authored test then really runs the bound workload command. Other
//! languages keep the region as comments and are not runnable as a scenario's driver.

use std::path::{Path, PathBuf};

/// The language families author mode builds or runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Lang {
    Rust,
    Go,
    Python,
    Shell,
    Other(String),
}

impl Lang {
    /// From a plan's `Skeleton language` field (its first word: `Rust (cargo test)`)
    /// or the target file's extension.
    pub fn of(language: &str) -> Lang {
        let word = language
            .split(|c: char| !c.is_ascii_alphanumeric())
            .find(|w| !w.is_empty())
            .unwrap_or_default();
        match word.to_ascii_lowercase().as_str() {
            "rust" | "rs" => Lang::Rust,
            "go" | "golang" => Lang::Go,
            "python" | "py" => Lang::Python,
            "shell" | "sh" | "bash" => Lang::Shell,
            other => Lang::Other(other.to_string()),
        }
    }

    pub fn name(&self) -> &str {
        match self {
            Lang::Rust => "rust",
            Lang::Go => "go",
            Lang::Python => "python",
            Lang::Shell => "shell",
            Lang::Other(name) => name,
        }
    }
}

/// How the workload region is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Idiom {
    /// `std::process::Command` run from the SUT root, which is `to_sut` (`""`, `/..`,
    /// `/../..` …) above the crate's `CARGO_MANIFEST_DIR`.
    Rust { to_sut: String },
    /// `subprocess.run` from the SUT root, which is `to_sut` (`.`, `..`, `../..` …)
    /// from the file's own directory.
    Python { to_sut: String },
    /// `os/exec` from the SUT root, `to_sut` above the package directory `go test`
    /// runs in; the imports it needs go in a declaration of their own after the
    /// package clause ([`GO_IMPORTS`]), under names no skeleton is likely to use.
    Go { to_sut: String },
    /// The command itself in a subshell, failing the script when it fails.
    Shell,
    /// Comments only: faultline cannot make it runnable code.
    Comment,
}

/// The nearest `Cargo.toml` upward from `file`, without leaving `root`.
pub fn crate_dir(root: &Path, file: &Path) -> Option<PathBuf> {
    let mut dir = file.parent()?;
    loop {
        if dir.join("Cargo.toml").is_file() {
            return Some(dir.to_path_buf());
        }
        if dir == root {
            return None;
        }
        dir = dir.parent().filter(|d| d.starts_with(root))?;
    }
}

/// The idiom for `path` (absolute, inside the canonical SUT `root`) in `lang`.
pub fn idiom(lang: &Lang, root: &Path, path: &Path) -> Idiom {
    match lang {
        Lang::Rust => crate_dir(root, path)
            .and_then(|dir| {
                let depth = dir.strip_prefix(root).ok()?.components().count();
                Some(Idiom::Rust {
                    to_sut: "/..".repeat(depth),
                })
            })
            .unwrap_or(Idiom::Comment),
        Lang::Python => Idiom::Python {
            to_sut: up_to_root(root, path),
        },
        Lang::Go => Idiom::Go {
            to_sut: up_to_root(root, path),
        },
        Lang::Shell => Idiom::Shell,
        _ => Idiom::Comment,
    }
}

/// The relative path from `path`'s directory up to `root`: `.`, `..`, `../..` …
fn up_to_root(root: &Path, path: &Path) -> String {
    let depth = path
        .parent()
        .and_then(|dir| dir.strip_prefix(root).ok())
        .map_or(0, |rel| rel.components().count());
    if depth == 0 {
        ".".to_string()
    } else {
        vec![".."; depth].join("/")
    }
}

/// What Go workload code imports, as its own declaration right after the package
/// clause (Go allows several; aliased so an existing `exec` or `os` import is untouched).
pub const GO_IMPORTS: &str = "import (\n\tflos \"os\"\n\tflexec \"os/exec\"\n)\n";

fn is_package_clause(line: &str) -> bool {
    line.trim_start().starts_with("package ")
}

/// Whether Go source `text` has a package clause for [`GO_IMPORTS`] to follow.
pub fn has_package_clause(text: &str) -> bool {
    text.lines().any(is_package_clause)
}

/// Puts [`GO_IMPORTS`] after the first package clause of Go source `text`.
pub fn with_go_imports(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + GO_IMPORTS.len() + 1);
    let mut placed = false;
    for line in text.lines() {
        out.push_str(line);
        out.push('\n');
        if !placed && is_package_clause(line) {
            out.push('\n');
            out.push_str(GO_IMPORTS);
            placed = true;
        }
    }
    out
}

/// The `${name}` references of a run-spec command, in order, without repeats.
pub fn references(command: &str) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    let mut rest = command;
    while let Some(start) = rest.find("${") {
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else { break };
        let name = after[..end].to_string();
        if !names.contains(&name) {
            names.push(name);
        }
        rest = &after[end + 1..];
    }
    names
}

/// A name the shell can read from the environment as `${name}`.
fn shell_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The workload command as code at `indent`, or `None` when `idiom` cannot carry it:
/// comment idiom, or a `${…}` the shell cannot take from the environment
/// (`${port:NAME}`). The code runs the command through `sh -c`, so its `${name}`s
/// are read from the environment the driver command sets.
pub fn workload_code(idiom: &Idiom, command: &str, indent: &str) -> Option<String> {
    if !references(command).iter().all(|n| shell_name(n)) {
        return None;
    }
    match idiom {
        Idiom::Rust { to_sut } => {
            let dir = if to_sut.is_empty() {
                "env!(\"CARGO_MANIFEST_DIR\")".to_string()
            } else {
                format!("concat!(env!(\"CARGO_MANIFEST_DIR\"), {to_sut:?})")
            };
            Some(format!(
                "{indent}let workload = std::process::Command::new(\"sh\")\n\
                 {indent}    .arg(\"-c\")\n\
                 {indent}    .arg({command:?})\n\
                 {indent}    .current_dir({dir})\n\
                 {indent}    .status()\n\
                 {indent}    .expect(\"the workload command starts\");\n\
                 {indent}assert!(workload.success(), \"the workload command failed: {{workload}}\");\n"
            ))
        }
        Idiom::Python { to_sut } => {
            // A JSON string is a valid Python string literal.
            let literal = serde_json::to_string(command).ok()?;
            let up = serde_json::to_string(to_sut).ok()?;
            Some(format!(
                "{indent}import os, subprocess\n\
                 {indent}sut = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), {up}))\n\
                 {indent}workload = subprocess.run([\"sh\", \"-c\", {literal}], cwd=sut)\n\
                 {indent}assert workload.returncode == 0, \"the workload command failed: %d\" % workload.returncode\n"
            ))
        }
        Idiom::Go { to_sut } => {
            // A JSON string is a valid Go interpreted string literal.
            let literal = serde_json::to_string(command).ok()?;
            let dir = serde_json::to_string(to_sut).ok()?;
            Some(format!(
                "{indent}flWorkload := flexec.Command(\"sh\", \"-c\", {literal})\n\
                 {indent}flWorkload.Dir = {dir}\n\
                 {indent}flWorkload.Stdout, flWorkload.Stderr = flos.Stdout, flos.Stderr\n\
                 {indent}if err := flWorkload.Run(); err != nil {{\n\
                 {indent}\tpanic(\"the workload command failed: \" + err.Error())\n\
                 {indent}}}\n"
            ))
        }
        Idiom::Shell => Some(format!(
            "{indent}if ! ( {command}\n{indent}); then\n\
             {indent}  echo \"the workload command failed\" >&2\n\
             {indent}  exit 1\n{indent}fi\n"
        )),
        Idiom::Comment => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rust_code_runs_the_command_from_the_sut_root_and_port_vars_stay_comments() {
        let code = workload_code(
            &Idiom::Rust {
                to_sut: "/..".into(),
            },
            "./load.sh --seed ${seed} \"x\"",
            "    ",
        )
        .expect("code");
        assert!(
            code.contains(r#".arg("./load.sh --seed ${seed} \"x\"")"#),
            "{code}"
        );
        assert!(code.contains(r#"concat!(env!("CARGO_MANIFEST_DIR"), "/..")"#));
        assert_eq!(
            workload_code(&Idiom::Shell, "curl localhost:${port:api}", ""),
            None
        );
        assert_eq!(references("a ${x} ${y} ${x}"), vec!["x", "y"]);
        assert_eq!(Lang::of("Rust (cargo test)"), Lang::Rust);
        assert_eq!(Lang::of("zig"), Lang::Other("zig".into()));
    }

    #[test]
    fn python_code_runs_the_command_from_the_sut_root() {
        let root = Path::new("/sut");
        let idiom = idiom(&Lang::Python, root, Path::new("/sut/tests/chaos/test_x.py"));
        assert_eq!(
            idiom,
            Idiom::Python {
                to_sut: "../..".into()
            }
        );
        let code = workload_code(&idiom, "./load.sh \"a b\" ${seed}", "    ").expect("code");
        assert!(
            code.contains(r#"["sh", "-c", "./load.sh \"a b\" ${seed}"]"#),
            "{code}"
        );
        assert!(code.contains(r#"abspath(__file__)), "../..")"#), "{code}");
        assert!(code.lines().all(|l| l.starts_with("    ")), "{code}");
    }

    #[test]
    fn go_code_runs_the_command_from_the_sut_root_with_its_own_imports() {
        let idiom = idiom(
            &Lang::Go,
            Path::new("/sut"),
            Path::new("/sut/pkg/kv/a_test.go"),
        );
        assert_eq!(
            idiom,
            Idiom::Go {
                to_sut: "../..".into()
            }
        );
        let code = workload_code(&idiom, "./load.sh \"a b\" ${seed}", "\t").expect("code");
        assert!(
            code.contains(r#"flexec.Command("sh", "-c", "./load.sh \"a b\" ${seed}")"#),
            "{code}"
        );
        assert!(code.contains(r#"flWorkload.Dir = "../..""#), "{code}");
        let source = "// header\npackage kv\n\nimport \"testing\"\n";
        assert!(has_package_clause(source));
        let placed = with_go_imports(source);
        assert!(
            placed.starts_with("// header\npackage kv\n\nimport (\n\tflos \"os\"\n"),
            "{placed}"
        );
        assert!(placed.ends_with("import \"testing\"\n"), "{placed}");
        assert!(!has_package_clause("func f() {}\n"));
    }

    #[test]
    fn the_crate_is_found_upward_but_never_above_the_root() {
        let root = tempfile::tempdir().expect("tempdir");
        let root = root.path().canonicalize().expect("canonical");
        std::fs::create_dir_all(root.join("sub/tests")).expect("dirs");
        std::fs::write(root.join("sub/Cargo.toml"), "").expect("manifest");
        let file = root.join("sub/tests/t.rs");
        assert_eq!(crate_dir(&root, &file), Some(root.join("sub")));
        assert_eq!(
            idiom(&Lang::Rust, &root, &file),
            Idiom::Rust {
                to_sut: "/..".into()
            }
        );
        assert_eq!(crate_dir(&root, &root.join("other/t.rs")), None);
    }
}
