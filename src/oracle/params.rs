//! Checker parameters: `name=value` pairs, from `--param` or after the checker
//! name in a run spec (`builtin: "prefix-order window=2"`).

use std::collections::BTreeMap;

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Params(BTreeMap<String, String>);

impl Params {
    /// Parse `name=value` items.
    pub fn parse<S: AsRef<str>>(items: &[S]) -> Result<Params, String> {
        let mut map = BTreeMap::new();
        for item in items {
            let item = item.as_ref();
            let (k, v) = item
                .split_once('=')
                .ok_or_else(|| format!("parameter `{item}`: expected name=value"))?;
            if map
                .insert(k.trim().to_string(), v.trim().to_string())
                .is_some()
            {
                return Err(format!("parameter `{k}` given twice"));
            }
        }
        Ok(Params(map))
    }

    /// Split a run-spec checker string into its name and parameters.
    pub fn split_spec(spec: &str) -> Result<(String, Params), String> {
        let mut words = spec.split_whitespace();
        let name = words.next().unwrap_or_default().to_string();
        let rest: Vec<&str> = words.collect();
        Ok((name, Params::parse(&rest)?))
    }

    /// Error on any parameter not in `allowed`.
    pub fn only(&self, checker: &str, allowed: &[&str]) -> Result<(), String> {
        match self.0.keys().find(|k| !allowed.contains(&k.as_str())) {
            Some(k) if allowed.is_empty() => Err(format!(
                "checker `{checker}` takes no parameters (got `{k}`)"
            )),
            Some(k) => Err(format!(
                "checker `{checker}`: unknown parameter `{k}` (one of: {})",
                allowed.join(", ")
            )),
            None => Ok(()),
        }
    }

    pub fn str(&self, name: &str) -> Option<&str> {
        self.0.get(name).map(String::as_str)
    }

    pub fn f64(&self, name: &str) -> Result<Option<f64>, String> {
        self.str(name)
            .map(|v| {
                v.parse::<f64>()
                    .ok()
                    .filter(|f| f.is_finite())
                    .ok_or_else(|| format!("parameter `{name}`: `{v}` is not a number"))
            })
            .transpose()
    }

    pub fn u64(&self, name: &str) -> Result<Option<u64>, String> {
        self.str(name)
            .map(|v| {
                v.parse::<u64>()
                    .map_err(|_| format!("parameter `{name}`: `{v}` is not a non-negative integer"))
            })
            .transpose()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}
