//! The named enums of the protocol (block strategy, glue type, admin generation), read and
//! written by their Java names.

use std::fmt;
use std::str::FromStr;

use serde::de::Deserializer;
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};

use super::ProtocolError;

/// Implements Display, FromStr and string serde for the name enums, so configs and JSON use the Java names.
macro_rules! named_enum_impls {
    ($ty:ident, $err:ident) => {
        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $ty {
            type Err = ProtocolError;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                $ty::parse(s).ok_or_else(|| ProtocolError::$err(s.to_string()))
            }
        }

        impl Serialize for $ty {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let raw = String::deserialize(deserializer)?;
                raw.parse().map_err(serde::de::Error::custom)
            }
        }
    };
}

/// What to do with a trigger for a job that is already running (Java `ExecutorBlockStrategyEnum`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BlockStrategy {
    /// Queue behind the running trigger; also what unknown names mean.
    SerialExecution,
    /// Reject the new trigger while the job is busy.
    DiscardLater,
    /// Stop the running trigger and its queue, then run the new one.
    CoverEarly,
}

impl BlockStrategy {
    /// Every strategy in Java declaration order, for UI lists and exhaustive tests.
    pub const ALL: &'static [BlockStrategy] = &[
        BlockStrategy::SerialExecution,
        BlockStrategy::DiscardLater,
        BlockStrategy::CoverEarly,
    ];

    /// The Java enum name used on the wire and in the database.
    pub fn as_str(self) -> &'static str {
        match self {
            BlockStrategy::SerialExecution => "SERIAL_EXECUTION",
            BlockStrategy::DiscardLater => "DISCARD_LATER",
            BlockStrategy::CoverEarly => "COVER_EARLY",
        }
    }

    /// The English title Java shows in the UI and embeds in block-strategy messages.
    pub fn title(self) -> &'static str {
        match self {
            BlockStrategy::SerialExecution => "Serial execution",
            BlockStrategy::DiscardLater => "Discard Later",
            BlockStrategy::CoverEarly => "Cover Early",
        }
    }

    /// Exact-name match like Java's `match`, so typos are not silently accepted where validation matters.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|b| b.as_str() == s)
    }

    /// The executor's reading of a raw name: Java treats anything unknown as serial.
    pub fn parse_or_serial(s: &str) -> Self {
        Self::parse(s).unwrap_or(BlockStrategy::SerialExecution)
    }
}

named_enum_impls!(BlockStrategy, UnknownBlockStrategy);

/// How a job's code is supplied (Java `GlueTypeEnum`); script types run an external interpreter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GlueType {
    /// A handler registered in the executor by name.
    Bean,
    /// Groovy source compiled in the JVM; Java-only, so jobwheel executors reject it.
    GlueGroovy,
    /// Bash script.
    GlueShell,
    /// Python 3 script (`python3` since Java 3.2).
    GluePython,
    /// Python 2 script, run with `python`.
    GluePython2,
    /// Node.js script.
    GlueNodejs,
    /// PHP script.
    GluePhp,
    /// PowerShell script, run with `pwsh` as Java 3.4.2 does.
    GluePowershell,
}

impl GlueType {
    /// Every glue type, for UI lists and exhaustive tests.
    pub const ALL: &'static [GlueType] = &[
        GlueType::Bean,
        GlueType::GlueGroovy,
        GlueType::GlueShell,
        GlueType::GluePython,
        GlueType::GluePython2,
        GlueType::GlueNodejs,
        GlueType::GluePhp,
        GlueType::GluePowershell,
    ];

    /// The Java enum name used on the wire and in the database.
    pub fn as_str(self) -> &'static str {
        match self {
            GlueType::Bean => "BEAN",
            GlueType::GlueGroovy => "GLUE_GROOVY",
            GlueType::GlueShell => "GLUE_SHELL",
            GlueType::GluePython => "GLUE_PYTHON",
            GlueType::GluePython2 => "GLUE_PYTHON2",
            GlueType::GlueNodejs => "GLUE_NODEJS",
            GlueType::GluePhp => "GLUE_PHP",
            GlueType::GluePowershell => "GLUE_POWERSHELL",
        }
    }

    /// Exact-name match like Java's `GlueTypeEnum.match`.
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|g| g.as_str() == s)
    }

    /// Script types are run as a child process rather than an in-process handler.
    pub fn is_script(self) -> bool {
        self.interpreter().is_some()
    }

    /// Program put in `argv[0]` for script types (no shell is involved).
    pub fn interpreter(self) -> Option<&'static str> {
        match self {
            GlueType::Bean | GlueType::GlueGroovy => None,
            GlueType::GlueShell => Some("bash"),
            GlueType::GluePython => Some("python3"),
            GlueType::GluePython2 => Some("python"),
            GlueType::GlueNodejs => Some("node"),
            GlueType::GluePhp => Some("php"),
            GlueType::GluePowershell => Some("pwsh"),
        }
    }

    /// Script file suffix, part of the `{jobId}_{glueUpdatetime}{suffix}` file name.
    pub fn suffix(self) -> Option<&'static str> {
        match self {
            GlueType::Bean | GlueType::GlueGroovy => None,
            GlueType::GlueShell => Some(".sh"),
            GlueType::GluePython | GlueType::GluePython2 => Some(".py"),
            GlueType::GlueNodejs => Some(".js"),
            GlueType::GluePhp => Some(".php"),
            GlueType::GluePowershell => Some(".ps1"),
        }
    }

    /// Display name as the Java ≥3.2 UI shows it, used in messages users compare with Java's.
    pub fn desc(self) -> &'static str {
        match self {
            GlueType::Bean => "BEAN",
            GlueType::GlueGroovy => "GLUE(Java)",
            GlueType::GlueShell => "GLUE(Shell)",
            GlueType::GluePython => "GLUE(Python3)",
            GlueType::GluePython2 => "GLUE(Python2)",
            GlueType::GlueNodejs => "GLUE(Nodejs)",
            GlueType::GluePhp => "GLUE(PHP)",
            GlueType::GluePowershell => "GLUE(PowerShell)",
        }
    }
}

named_enum_impls!(GlueType, UnknownGlueType);

/// Which admin generation the executor talks to; only callbacks and `/log` differ and both can't be sent at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum AdminProtocol {
    /// Admins up to 3.4.x: callback body is an array, time key `logDateTim`.
    #[default]
    V2,
    /// 3.5 admins: callback body is `{"callbackList":[...]}`, time key `logDateTime`.
    V35,
}

impl AdminProtocol {
    /// Every protocol, for help texts.
    pub const ALL: &'static [AdminProtocol] = &[AdminProtocol::V2, AdminProtocol::V35];

    /// The configuration spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            AdminProtocol::V2 => "v2",
            AdminProtocol::V35 => "v3.5",
        }
    }

    /// Case-insensitive match of the configuration spelling, so `V3.5` in an env var works.
    pub fn parse(s: &str) -> Option<Self> {
        let s = s.trim();
        Self::ALL
            .iter()
            .copied()
            .find(|p| p.as_str().eq_ignore_ascii_case(s))
    }

    /// The epoch-ms key this generation uses in callback items and `/log` requests.
    pub fn log_date_key(self) -> &'static str {
        match self {
            AdminProtocol::V2 => "logDateTim",
            AdminProtocol::V35 => "logDateTime",
        }
    }
}

named_enum_impls!(AdminProtocol, UnknownAdminProtocol);

#[cfg(test)]
mod tests {
    use super::*;

    use serde_json::json;

    #[test]
    fn admin_protocol_parsing() {
        assert_eq!("v2".parse::<AdminProtocol>().unwrap(), AdminProtocol::V2);
        assert_eq!("V2".parse::<AdminProtocol>().unwrap(), AdminProtocol::V2);
        assert_eq!("v3.5".parse::<AdminProtocol>().unwrap(), AdminProtocol::V35);
        assert_eq!("V3.5".parse::<AdminProtocol>().unwrap(), AdminProtocol::V35);
        for p in AdminProtocol::ALL {
            assert_eq!(p.as_str().parse::<AdminProtocol>().unwrap(), *p);
            assert_eq!(p.to_string(), p.as_str());
        }
        let err = "v4".parse::<AdminProtocol>().expect_err("v4 is unknown");
        let msg = err.to_string();
        assert!(msg.contains("v4"), "{msg}");
        assert!(msg.contains("v2") && msg.contains("v3.5"), "{msg}");
        assert!("".parse::<AdminProtocol>().is_err());
        assert!("v3".parse::<AdminProtocol>().is_err());
        assert_eq!(AdminProtocol::default(), AdminProtocol::V2);
        assert_eq!(AdminProtocol::V2.log_date_key(), "logDateTim");
        assert_eq!(AdminProtocol::V35.log_date_key(), "logDateTime");
        assert_eq!(
            serde_json::from_str::<AdminProtocol>(r#""v3.5""#).unwrap(),
            AdminProtocol::V35
        );
    }

    #[test]
    fn block_strategy_names() {
        let names: Vec<&str> = BlockStrategy::ALL.iter().map(|b| b.as_str()).collect();
        assert_eq!(names, ["SERIAL_EXECUTION", "DISCARD_LATER", "COVER_EARLY"]);
        for b in BlockStrategy::ALL {
            assert_eq!(BlockStrategy::parse(b.as_str()), Some(*b));
            assert_eq!(b.as_str().parse::<BlockStrategy>().unwrap(), *b);
            assert_eq!(serde_json::to_value(b).unwrap(), json!(b.as_str()));
        }
        assert_eq!(BlockStrategy::parse("serial_execution"), None);
        assert_eq!(
            BlockStrategy::parse_or_serial("bogus"),
            BlockStrategy::SerialExecution
        );
        let err = "bogus".parse::<BlockStrategy>().expect_err("unknown");
        for b in BlockStrategy::ALL {
            assert!(err.to_string().contains(b.as_str()), "{err}");
        }
    }

    #[test]
    fn glue_type_table() {
        type Row = (
            &'static str,
            bool,
            Option<&'static str>,
            Option<&'static str>,
            &'static str,
        );
        let rows: Vec<Row> = GlueType::ALL
            .iter()
            .map(|g| {
                (
                    g.as_str(),
                    g.is_script(),
                    g.interpreter(),
                    g.suffix(),
                    g.desc(),
                )
            })
            .collect();
        assert_eq!(
            rows,
            vec![
                ("BEAN", false, None, None, "BEAN"),
                ("GLUE_GROOVY", false, None, None, "GLUE(Java)"),
                ("GLUE_SHELL", true, Some("bash"), Some(".sh"), "GLUE(Shell)"),
                (
                    "GLUE_PYTHON",
                    true,
                    Some("python3"),
                    Some(".py"),
                    "GLUE(Python3)"
                ),
                (
                    "GLUE_PYTHON2",
                    true,
                    Some("python"),
                    Some(".py"),
                    "GLUE(Python2)"
                ),
                (
                    "GLUE_NODEJS",
                    true,
                    Some("node"),
                    Some(".js"),
                    "GLUE(Nodejs)"
                ),
                ("GLUE_PHP", true, Some("php"), Some(".php"), "GLUE(PHP)"),
                (
                    "GLUE_POWERSHELL",
                    true,
                    Some("pwsh"),
                    Some(".ps1"),
                    "GLUE(PowerShell)"
                ),
            ]
        );
        let err = "GLUE_RUBY".parse::<GlueType>().expect_err("unknown");
        for g in GlueType::ALL {
            assert_eq!(GlueType::parse(g.as_str()), Some(*g));
            assert_eq!(g.as_str().parse::<GlueType>().unwrap(), *g);
            assert_eq!(g.to_string(), g.as_str());
            let back: GlueType = serde_json::from_value(json!(g.as_str())).unwrap();
            assert_eq!(back, *g);
            assert!(err.to_string().contains(g.as_str()), "{err}");
        }
        assert!(err.to_string().contains("GLUE_RUBY"));
        assert_eq!(GlueType::parse("bean"), None);
        assert!(serde_json::from_value::<GlueType>(json!("GLUE_RUBY")).is_err());
    }
}
