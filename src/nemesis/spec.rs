//! The one list of nemesis kinds. Each line names a kind (its run-spec key), its
//! variant and its spec type; the spec, held and undo enums and their dispatch are
//! made from it. A new kind is a line here, its module and its `references/nemesis.md`
//! entry.

use serde::de::{Error as _, MapAccess};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::{Context, HeldFault, InjectorSeen, Nemesis, Resource, UndoRecord, VictimSeen, Window};

macro_rules! nemeses {
    ($($kind:ident => $Variant:ident($Spec:ty)),* $(,)?) => {
        /// The nemesis kinds a run spec can name (`references/nemesis.md` documents each).
        #[derive(Debug, Clone, Copy, PartialEq, Eq)]
        pub enum Kind {
            $($Variant,)*
        }

        impl Kind {
            pub const ALL: &'static [Kind] = &[$(Kind::$Variant,)*];

            pub fn as_str(self) -> &'static str {
                match self {
                    $(Kind::$Variant => stringify!($kind),)*
                }
            }
        }

        /// One fault step's nemesis: the key of the step that names it, and its spec.
        #[derive(Debug, Clone, Serialize)]
        #[serde(rename_all = "lowercase")]
        pub enum NemesisSpec {
            $($Variant($Spec),)*
        }

        /// A fault between injection and heal.
        pub enum Held {
            $($Variant(<$Spec as Nemesis>::Held),)*
        }

        /// How a fault is undone after a crash, as the journal keeps it.
        #[derive(Debug, Clone, PartialEq)]
        pub enum Undo {
            $($Variant(<<$Spec as Nemesis>::Held as HeldFault>::Undo),)*
        }

        impl NemesisSpec {
            pub fn kind(&self) -> Kind {
                match self {
                    $(NemesisSpec::$Variant(_) => Kind::$Variant,)*
                }
            }

            /// The spec under key `key` of a fault step's map; `None` for a key that
            /// names no kind (its value is left unread).
            pub(crate) fn next_value<'de, A: MapAccess<'de>>(
                key: &str,
                map: &mut A,
            ) -> Result<Option<NemesisSpec>, A::Error> {
                $(if key == stringify!($kind) {
                    return Ok(Some(NemesisSpec::$Variant(map.next_value()?)));
                })*
                Ok(None)
            }

            pub fn privileged(&self, fault: &str) -> Option<String> {
                match self {
                    $(NemesisSpec::$Variant(s) => Nemesis::privileged(s, fault),)*
                }
            }

            pub fn node(&self) -> Option<&str> {
                match self {
                    $(NemesisSpec::$Variant(s) => Nemesis::node(s),)*
                }
            }

            pub fn ends_processes(&self) -> bool {
                match self {
                    $(NemesisSpec::$Variant(s) => Nemesis::ends_processes(s),)*
                }
            }

            pub fn commands(&self) -> Vec<(&'static str, String)> {
                match self {
                    $(NemesisSpec::$Variant(s) => Nemesis::commands(s),)*
                }
            }

            pub fn check(&self, of: &str, fault: &str) -> Vec<(String, String)> {
                match self {
                    $(NemesisSpec::$Variant(s) => Nemesis::check(s, of, fault),)*
                }
            }

            pub async fn prepare<C: Context>(
                &self,
                fault: &str,
                cx: &mut C,
            ) -> Result<Option<Resource>, C::Error> {
                match self {
                    $(NemesisSpec::$Variant(s) => Nemesis::prepare(s, fault, cx).await,)*
                }
            }

            pub async fn inject<C: Context>(
                &self,
                fault: &str,
                cx: &mut C,
            ) -> Result<Result<Held, String>, C::Error> {
                Ok(match self {
                    $(NemesisSpec::$Variant(s) => Nemesis::inject(s, fault, cx).await?.map(Held::$Variant),)*
                })
            }
        }

        impl Held {
            pub fn pid(&self) -> Option<i32> {
                match self {
                    $(Held::$Variant(h) => HeldFault::pid(h),)*
                }
            }

            pub fn undo(&self) -> Undo {
                match self {
                    $(Held::$Variant(h) => Undo::$Variant(HeldFault::undo(h)),)*
                }
            }

            pub async fn probe<C: Context>(
                &self,
                window: Window,
                cx: &C,
            ) -> Result<Option<InjectorSeen>, C::Error> {
                match self {
                    $(Held::$Variant(h) => HeldFault::probe(h, window, cx).await,)*
                }
            }

            pub async fn victim<C: Context>(
                &self,
                window: Window,
                cx: &C,
            ) -> Result<Option<VictimSeen>, C::Error> {
                match self {
                    $(Held::$Variant(h) => HeldFault::victim(h, window, cx).await,)*
                }
            }

            pub async fn heal<C: Context>(self, cx: &C) -> Result<String, String> {
                match self {
                    $(Held::$Variant(h) => HeldFault::heal(h, cx).await,)*
                }
            }
        }

        impl Undo {
            /// Heals fault `fault` from this record alone.
            pub fn heal(&self, fault: &str, reach: &crate::host::Reach) -> Result<String, String> {
                match self {
                    $(Undo::$Variant(u) => UndoRecord::heal(u, fault, reach),)*
                }
            }
        }

        impl Serialize for Undo {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                match self {
                    $(Undo::$Variant(u) => keyed(stringify!($kind), u, s),)*
                }
            }
        }

        impl<'de> Deserialize<'de> for Undo {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let value = serde_json::Value::deserialize(d)?;
                // A kind's key first, then the bare records in list order.
                $(if let Some(inner) = unkeyed(stringify!($kind), &value)? {
                    return Ok(Undo::$Variant(inner));
                })*
                $(if let Some(inner) = bare(&value) {
                    return Ok(Undo::$Variant(inner));
                })*
                Err(D::Error::custom(format!(
                    "an undo record of no known kind (one of: {})",
                    [$(stringify!($kind)),*].join(", ")
                )))
            }
        }
    };
}

/// `u` under `kind`'s key, or its bare fields for a kind that journals them so.
fn keyed<U: UndoRecord, S: Serializer>(kind: &str, u: &U, s: S) -> Result<S::Ok, S::Error> {
    if U::KEYED {
        use serde::ser::SerializeMap;
        let mut map = s.serialize_map(Some(1))?;
        map.serialize_entry(kind, u)?;
        map.end()
    } else {
        u.serialize(s)
    }
}

/// The record under `kind`'s key, for a keyed kind whose key is there.
fn unkeyed<U: UndoRecord, E: serde::de::Error>(
    kind: &str,
    value: &serde_json::Value,
) -> Result<Option<U>, E> {
    match value.get(kind).filter(|_| U::KEYED) {
        Some(inner) => U::deserialize(inner)
            .map(Some)
            .map_err(|e| E::custom(format!("undo record `{kind}`: {e}"))),
        None => Ok(None),
    }
}

/// The record as bare fields, for a kind that journals it so and whose fields these are.
fn bare<U: UndoRecord>(value: &serde_json::Value) -> Option<U> {
    if U::KEYED {
        return None;
    }
    U::deserialize(value).ok()
}

nemeses! {
    process => Process(super::process::ProcessFaultSpec),
    command => Command(super::command::CommandFaultSpec),
    net => Net(super::net::NetFaultSpec),
    disk => Disk(super::disk::DiskFaultSpec),
    clock => Clock(super::clock::ClockFaultSpec),
    proxy => Proxy(super::proxy::ProxyFaultSpec),
    docker => Docker(super::docker::DockerFaultSpec),
}

#[cfg(test)]
mod tests {
    use super::Undo;

    /// Journals written before the kinds were one list read, and are written, as then:
    /// a kind's key, or a process's / command's bare fields.
    #[test]
    fn undo_records_keep_their_journal_shapes() {
        let shapes = [
            r#"{"net":{"netns":null,"tag":"p-1-0","rules":[["iptables","-A","INPUT"]]}}"#,
            r#"{"disk":{"filler":"/tmp/x/.faultline-filler-d-1-0"}}"#,
            r#"{"clock":{"control":"/tmp/c"}}"#,
            r#"{"proxy":{"listen":"127.0.0.1:1","upstream":"127.0.0.1:2","toxic":{}}}"#,
            r#"{"pid":42,"action":"Pause","started":7}"#,
            r#"{"heal":"true","cwd":"/"}"#,
        ];
        let kinds = ["net", "disk", "clock", "proxy", "process", "command"];
        for (json, kind) in shapes.iter().zip(kinds) {
            let undo: Undo = serde_json::from_str(json).expect(json);
            let read = match &undo {
                Undo::Net(_) => "net",
                Undo::Disk(_) => "disk",
                Undo::Clock(_) => "clock",
                Undo::Proxy(_) => "proxy",
                Undo::Process(_) => "process",
                Undo::Command(_) => "command",
                Undo::Docker(_) => "docker",
            };
            assert_eq!(read, kind, "{json}");
            let written = serde_json::to_string(&undo).expect("serializes");
            assert_eq!(&written, json);
        }
        assert!(serde_json::from_str::<Undo>(r#"{"nothing":1}"#).is_err());
    }
}
