//! How an authored test is built and run, inferred from its language and location.
//! Builds write nothing into the SUT tree: cargo's target directory, Go's build cache
//! and Python's bytecode cache go under the session's `artifacts/author/`, cargo runs
//! `--locked` so it never rewrites a `Cargo.lock`, and Go never fetches a toolchain.

use std::path::Path;

use super::idiom::{Lang, crate_dir};

/// The shell command lines (run from the SUT root) for one authored test.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recipe {
    /// Builds the test, or why no build step is known.
    pub build: Result<String, String>,
    /// Runs it as the scenario's workload driver, or why it cannot be one.
    pub run: Result<String, String>,
}

fn quote(text: &str) -> Result<String, String> {
    shlex::try_quote(text)
        .map(|q| q.into_owned())
        .map_err(|e| format!("cannot quote `{text}` for the shell: {e}"))
}

/// `name='${name}' …`: faultline expands each variable the workload command reads,
/// and the authored test's `sh -c` reads it back from the environment.
fn forwarded(vars: &[String]) -> String {
    vars.iter().map(|n| format!("{n}='${{{n}}}' ")).collect()
}

/// The recipe for `path` (absolute, inside the canonical SUT `root`); `scratch` is the
/// absolute directory build outputs go to; `vars` are the workload's `${name}`s.
pub fn recipe(lang: &Lang, root: &Path, path: &Path, scratch: &Path, vars: &[String]) -> Recipe {
    let Ok(relative) = path.strip_prefix(root) else {
        let why = format!("{} is outside the SUT root", path.display());
        return Recipe {
            build: Err(why.clone()),
            run: Err(why),
        };
    };
    let file = relative.to_string_lossy();
    match lang {
        Lang::Rust => rust(root, path, scratch, vars),
        Lang::Go => go(relative, path, scratch, vars),
        Lang::Python => {
            let cache = quote(&scratch.join("pycache").to_string_lossy());
            let build = cache.clone().and_then(|cache| {
                Ok(format!(
                    "PYTHONPYCACHEPREFIX={cache} python3 -m py_compile {}",
                    quote(&file)?
                ))
            });
            // No pytest needed: every top-level `test*` function, in name order.
            let run = cache.and_then(|cache| {
                let runner = format!(
                    "import runpy; ns = runpy.run_path({}); \
                     [f() for n, f in sorted(ns.items()) if n.startswith('test') and callable(f)]",
                    serde_json::to_string(&file).map_err(|e| e.to_string())?
                );
                Ok(format!(
                    "{}PYTHONPYCACHEPREFIX={cache} python3 -c {}",
                    forwarded(vars),
                    quote(&runner)?
                ))
            });
            Recipe { build, run }
        }
        Lang::Shell => Recipe {
            build: quote(&file).map(|f| format!("bash -n {f}")),
            run: quote(&file).map(|f| format!("{}bash {f}", forwarded(vars))),
        },
        Lang::Other(name) => {
            let why = format!("no build step is known for `{name}` targets");
            Recipe {
                build: Err(why.clone()),
                run: Err(why),
            }
        }
    }
}

/// The `Test…` functions a Go test file declares, in file order.
fn go_tests(source: &str) -> Vec<String> {
    source
        .lines()
        .filter_map(|l| l.strip_prefix("func Test"))
        .filter_map(|rest| {
            let name = rest.split('(').next()?;
            let ident = name.chars().all(|c| c.is_alphanumeric() || c == '_');
            ident.then(|| format!("Test{name}"))
        })
        .collect()
}

/// `go test` on the file's package directory; the run takes only the file's own tests.
fn go(relative: &Path, path: &Path, scratch: &Path, vars: &[String]) -> Recipe {
    let dir = relative
        .parent()
        .map_or_else(String::new, |d| d.to_string_lossy().into_owned());
    let go = quote(&format!("./{dir}")).and_then(|dir| {
        let cache = quote(&scratch.join("gocache").to_string_lossy())?;
        Ok((format!("GOCACHE={cache} GOTOOLCHAIN=local go test"), dir))
    });
    let build = go
        .clone()
        .map(|(go, dir)| format!("{go} -c -o /dev/null {dir}"));
    let tests = std::fs::read_to_string(path).map(|s| go_tests(&s));
    let run = go.and_then(|(go, dir)| match tests {
        Ok(tests) if !tests.is_empty() => {
            let only = quote(&format!("^({})$", tests.join("|")))?;
            Ok(format!(
                "{}{go} -count=1 -v -run {only} {dir}",
                forwarded(vars)
            ))
        }
        Ok(_) => Err("it declares no `func Test…`".to_string()),
        Err(e) => Err(format!("{}: {e}", path.display())),
    });
    Recipe { build, run }
}

fn rust(root: &Path, path: &Path, scratch: &Path, vars: &[String]) -> Recipe {
    let fail = |why: String| Recipe {
        build: Err(why.clone()),
        run: Err(why),
    };
    let Some(krate) = crate_dir(root, path) else {
        return fail("no Cargo.toml above it inside the SUT".into());
    };
    let locked = krate
        .ancestors()
        .take_while(|d| d.starts_with(root))
        .any(|d| d.join("Cargo.lock").is_file());
    if !locked {
        return fail(
            "no Cargo.lock: cargo would write one into the SUT, and author mode writes only \
             declared targets"
                .into(),
        );
    }
    let manifest = krate
        .join("Cargo.toml")
        .strip_prefix(root)
        .map(|m| m.to_string_lossy().into_owned())
        .unwrap_or_default();
    let quoted = quote(&manifest).and_then(|m| {
        let target = quote(&scratch.join("target").to_string_lossy())?;
        Ok((m, target))
    });
    let (manifest, target) = match quoted {
        Ok(pair) => pair,
        Err(why) => return fail(why),
    };
    let cargo = format!("CARGO_TARGET_DIR={target} cargo test --locked --manifest-path {manifest}");
    // Only a file directly in the crate's tests/ is a test target of its own.
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .filter(|_| path.parent() == Some(krate.join("tests").as_path()));
    match stem {
        Some(stem) => match quote(&stem) {
            Ok(stem) => Recipe {
                build: Ok(format!("{cargo} --no-run --test {stem}")),
                run: Ok(format!(
                    "{}{cargo} --test {stem} -- --nocapture",
                    forwarded(vars)
                )),
            },
            Err(why) => fail(why),
        },
        None => Recipe {
            build: Ok(format!("{cargo} --no-run")),
            run: Err(
                "it is not directly under its crate's tests/, so it is no test target of its own"
                    .into(),
            ),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recipes_by_language_and_location() {
        let root = tempfile::tempdir().expect("tempdir");
        let root = root.path().canonicalize().expect("canonical");
        let scratch = Path::new("/s");
        std::fs::create_dir_all(root.join("tests")).expect("tests");
        std::fs::write(root.join("Cargo.toml"), "").expect("manifest");
        let test = root.join("tests/kept.rs");
        let unlocked = recipe(&Lang::Rust, &root, &test, scratch, &[]);
        assert!(unlocked.build.is_err_and(|w| w.contains("Cargo.lock")));
        std::fs::write(root.join("Cargo.lock"), "").expect("lock");
        let vars = vec!["seed".to_string()];
        let rust = recipe(&Lang::Rust, &root, &test, scratch, &vars);
        assert_eq!(
            rust.build,
            Ok(
                "CARGO_TARGET_DIR=/s/target cargo test --locked --manifest-path Cargo.toml \
                --no-run --test kept"
                    .to_string()
            )
        );
        assert_eq!(
            rust.run,
            Ok(
                "seed='${seed}' CARGO_TARGET_DIR=/s/target cargo test --locked \
                --manifest-path Cargo.toml --test kept -- --nocapture"
                    .to_string()
            )
        );
        let nested = recipe(&Lang::Rust, &root, &root.join("src/x.rs"), scratch, &[]);
        assert!(nested.build.is_ok_and(|b| !b.contains("--test")));
        assert!(nested.run.is_err());
        let go_file = root.join("pkg/a_test.go");
        std::fs::create_dir_all(root.join("pkg")).expect("pkg");
        std::fs::write(
            &go_file,
            "package pkg\nfunc TestA(t *testing.T) {}\nfunc helper() {}\nfunc Test_b(t *testing.T) {}\n",
        )
        .expect("go file");
        let go = recipe(&Lang::Go, &root, &go_file, scratch, &vars);
        let cached = "GOCACHE=/s/gocache GOTOOLCHAIN=local go test";
        assert_eq!(go.build, Ok(format!("{cached} -c -o /dev/null ./pkg")));
        assert_eq!(
            go.run,
            Ok(format!(
                "seed='${{seed}}' {cached} -count=1 -v -run '^(TestA|Test_b)$' ./pkg"
            ))
        );
        std::fs::write(&go_file, "package pkg\n").expect("go file");
        let none = recipe(&Lang::Go, &root, &go_file, scratch, &[]);
        assert!(none.run.is_err_and(|w| w.contains("no `func Test")));
        let sh = recipe(&Lang::Shell, &root, &root.join("t/a b.sh"), scratch, &[]);
        assert_eq!(sh.build, Ok("bash -n 't/a b.sh'".to_string()));
        let other = recipe(&Lang::Other("zig".into()), &root, &test, scratch, &[]);
        assert!(
            other
                .build
                .is_err_and(|w| w.contains("no build step is known"))
        );
    }
}
