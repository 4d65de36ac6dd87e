//! Makefile targets and justfile recipes: names defined at column 0, each with the
//! line that defines it and its recipe body (for classification and tool detection).

/// One target / recipe as written in the file.
pub(super) struct Recipe {
    pub name: String,
    /// 1-based line of the definition.
    pub line: usize,
    /// The definition line as written.
    pub text: String,
    /// Recipe lines with their 1-based line numbers.
    pub body: Vec<(usize, String)>,
}

fn index_of(out: &mut Vec<Recipe>, name: &str, line: usize, text: &str) -> usize {
    if let Some(k) = out.iter().position(|r| r.name == name) {
        return k;
    }
    out.push(Recipe {
        name: name.to_string(),
        line,
        text: text.to_string(),
        body: Vec::new(),
    });
    out.len() - 1
}

/// `names: deps` → (`names`, `deps`); `None` for variable assignments (`X = y`,
/// `X := y`, `X ::= y`, `X ?= a:b`) and lines without a colon.
fn rule_split(line: &str) -> Option<(&str, &str)> {
    let colon = line.find(':')?;
    let (names, after) = (&line[..colon], &line[colon + 1..]);
    if names.contains('=') || after.starts_with('=') || after.starts_with(":=") {
        return None;
    }
    Some((names, after.strip_prefix(':').unwrap_or(after)))
}

/// Make targets. Skipped: special targets (`.PHONY`, `.c.o`), pattern rules (`%`),
/// names built from variables (`$`), assignments, `define` blocks and comments. A
/// target defined twice (`a: dep` then `a:` with a recipe) is reported once.
pub(super) fn make_targets(text: &str) -> Vec<Recipe> {
    let mut out: Vec<Recipe> = Vec::new();
    let mut current: Vec<usize> = Vec::new();
    let mut in_define = false;
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let first = raw.split_whitespace().next().unwrap_or_default();
        if in_define {
            in_define = first != "endef";
            continue;
        }
        if let Some(cmd) = raw.strip_prefix('\t') {
            for &k in &current {
                out[k].body.push((n, cmd.trim().to_string()));
            }
            continue;
        }
        if raw.trim().is_empty() || raw.starts_with('#') {
            continue;
        }
        current.clear();
        if raw.starts_with(' ') {
            continue;
        }
        if first == "define" || (first == "export" && raw.contains("define ")) {
            in_define = true;
            continue;
        }
        let Some((names, rest)) = rule_split(raw) else {
            continue;
        };
        let inline = rest.split_once(';').map(|(_, cmd)| cmd.trim());
        for name in names.split_whitespace() {
            if name.starts_with('.') || name.contains('%') || name.contains('$') {
                continue;
            }
            let k = index_of(&mut out, name, n, raw);
            if let Some(cmd) = inline.filter(|c| !c.is_empty()) {
                out[k].body.push((n, cmd.to_string()));
            }
            current.push(k);
        }
    }
    out
}

/// Words at column 0 that start a justfile setting, not a recipe.
const JUST_KEYWORDS: &[&str] = &["set", "alias", "export", "import", "mod", "if", "else"];

/// Whether the rest of a line after a recipe name ends the header with a `:` (a
/// recipe) rather than `:=` (an assignment); quotes in parameter defaults are skipped.
fn is_recipe_header(rest: &str) -> bool {
    let mut quote: Option<char> = None;
    let mut chars = rest.chars().peekable();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, ':') => return chars.peek() != Some(&'='),
            _ => {}
        }
    }
    false
}

/// Justfile recipes (`name args*:` at column 0, `@name` too). Skipped: settings,
/// aliases, assignments (`x := y`), comments and attributes (`[private]`).
pub(super) fn just_recipes(text: &str) -> Vec<Recipe> {
    let mut out: Vec<Recipe> = Vec::new();
    let mut current: Option<usize> = None;
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        if raw.starts_with([' ', '\t']) {
            if let Some(k) = current {
                out[k].body.push((n, raw.trim().to_string()));
            }
            continue;
        }
        if raw.trim().is_empty() {
            continue;
        }
        current = None;
        if raw.starts_with(['#', '[']) {
            continue;
        }
        let line = raw.strip_prefix('@').unwrap_or(raw);
        let end = line
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
            .unwrap_or(line.len());
        let (name, rest) = line.split_at(end);
        let starts_ok = name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
        if !starts_ok || JUST_KEYWORDS.contains(&name) || !is_recipe_header(rest) {
            continue;
        }
        current = Some(index_of(&mut out, name, n, raw));
    }
    out
}
