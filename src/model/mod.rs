//! Domain types shared by the store, the scheduler and the web layer.
//!
//! Enum values are stored and sent as XXL-JOB's exact enum names, so an XXL-JOB
//! database or client reads them unchanged.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

pub use crate::protocol::{BlockStrategy, GlueType};

mod address;
mod glue_template;
mod job;
mod run;
mod text;
mod user;

pub use address::*;
pub use glue_template::*;
pub use job::*;
pub use run::*;
pub use text::*;
pub use user::*;

/// A value that is not one of an enum's allowed names.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {kind} '{value}'; allowed: {}", allowed.join(", "))]
pub struct UnknownVariant {
    /// What the value was meant to be, e.g. "schedule type".
    pub kind: &'static str,
    /// The value as given.
    pub value: String,
    /// Every accepted value.
    pub allowed: &'static [&'static str],
}

/// Defines a string-valued enum with `as_str`, `ALL`, `FromStr`, `Display` and serde as the name.
macro_rules! string_enum {
    ($(#[$meta:meta])* $name:ident, $kind:literal { $($(#[$vmeta:meta])* $variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name { $($(#[$vmeta])* $variant),+ }

        impl $name {
            /// Every variant, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];
            /// Every variant's wire name, in declaration order.
            pub const NAMES: &'static [&'static str] = &[$($text),+];

            /// The wire/database name.
            pub fn as_str(self) -> &'static str {
                match self { $($name::$variant => $text),+ }
            }
        }

        impl FromStr for $name {
            type Err = UnknownVariant;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                match s {
                    $($text => Ok($name::$variant),)+
                    _ => Err(UnknownVariant { kind: $kind, value: s.to_string(), allowed: Self::NAMES }),
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result { f.write_str(self.as_str()) }
        }

        impl Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> { s.serialize_str(self.as_str()) }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = String::deserialize(d)?;
                s.parse().map_err(serde::de::Error::custom)
            }
        }
    };
}

string_enum!(
    /// How a job's fire times are computed.
    ScheduleType, "schedule type" {
        /// Never fires by itself: manual, API or parent triggers only.
        None => "NONE",
        /// Quartz cron expression.
        Cron => "CRON",
        /// Every N seconds from the previous fire time.
        FixRate => "FIX_RATE",
        /// N seconds after the previous run ended.
        FixDelay => "FIX_DELAY",
    }
);

string_enum!(
    /// What to do with a fire time missed by more than the pre-read window.
    MisfireStrategy, "misfire strategy" {
        /// Skip the missed fire time.
        DoNothing => "DO_NOTHING",
        /// Fire once now, then continue from now.
        FireOnceNow => "FIRE_ONCE_NOW",
    }
);

string_enum!(
    /// How the admin picks an executor address for a trigger.
    RouteStrategy, "route strategy" {
        /// First address of the sorted list.
        First => "FIRST",
        /// Last address of the sorted list.
        Last => "LAST",
        /// Round robin per job.
        Round => "ROUND",
        /// Uniformly random.
        Random => "RANDOM",
        /// XXL-JOB's MD5 ring with 100 virtual nodes per address.
        ConsistentHash => "CONSISTENT_HASH",
        /// The address used least often by this job.
        LeastFrequentlyUsed => "LEAST_FREQUENTLY_USED",
        /// The address used longest ago by this job.
        LeastRecentlyUsed => "LEAST_RECENTLY_USED",
        /// The first address that answers `/beat`.
        Failover => "FAILOVER",
        /// The first address whose `/idleBeat` says the job is idle.
        Busyover => "BUSYOVER",
        /// Every address, with shard index/total.
        ShardingBroadcast => "SHARDING_BROADCAST",
    }
);

string_enum!(
    /// Why a job was triggered; recorded on each log row.
    TriggerType, "trigger type" {
        /// From the UI or REST API.
        Manual => "MANUAL",
        /// From the schedule.
        Cron => "CRON",
        /// A retry of a failed run.
        Retry => "RETRY",
        /// A parent job succeeded.
        Parent => "PARENT",
        /// From the executor-facing job API.
        Api => "API",
        /// Catch-up for a missed fire time.
        Misfire => "MISFIRE",
        /// A node of a workflow run.
        Workflow => "WORKFLOW",
    }
);

string_enum!(
    /// Where a group's executor addresses come from.
    AddressType, "address type" {
        /// Executors register themselves.
        Auto => "AUTO",
        /// An operator typed the list.
        Manual => "MANUAL",
    }
);

impl AddressType {
    /// XXL-JOB's numeric code (0 automatic, 1 manual), as stored in the database.
    pub fn code(self) -> i32 {
        match self {
            AddressType::Auto => 0,
            AddressType::Manual => 1,
        }
    }

    /// The type for a stored numeric code; anything but 1 counts as automatic, as in XXL-JOB.
    pub fn from_code(code: i32) -> Self {
        if code == 1 {
            AddressType::Manual
        } else {
            AddressType::Auto
        }
    }
}

impl TriggerType {
    /// The English title XXL-JOB writes into trigger messages.
    pub fn title(self) -> &'static str {
        match self {
            TriggerType::Manual => "Manual trigger",
            TriggerType::Cron => "Cron trigger",
            TriggerType::Retry => "Fail retry trigger",
            TriggerType::Parent => "Parent job trigger",
            TriggerType::Api => "Api trigger",
            TriggerType::Misfire => "Misfire compensation trigger",
            TriggerType::Workflow => "Workflow node trigger",
        }
    }
}

/// `trigger_status` of a stopped job.
pub const TRIGGER_STATUS_STOPPED: i32 = 0;
/// `trigger_status` of a running (scheduled) job.
pub const TRIGGER_STATUS_RUNNING: i32 = 1;

/// `trigger_next_time` of a FIX_DELAY job whose run has not ended yet: no pre-read picks it up
/// until the run's result sets the real next fire time.
pub const AWAITING_COMPLETION: i64 = i64::MAX;

/// `alarm_status` values of a log row (XXL-JOB's codes).
pub mod alarm_status {
    /// Not looked at yet.
    pub const DEFAULT: i32 = 0;
    /// Claimed by a fail monitor.
    pub const LOCKED: i32 = -1;
    /// Nothing to alarm (success, or the job is gone).
    pub const NOT_NEEDED: i32 = 1;
    /// Alarm delivered.
    pub const SENT: i32 = 2;
    /// Alarm delivery failed.
    pub const FAILED: i32 = 3;
    /// Waiting in an instance queue (admission QUEUED): no monitor looks at the row until it
    /// is admitted, when it becomes [`DEFAULT`].
    pub const QUEUED: i32 = 4;
}

mod admission;
mod workflow;
pub use admission::*;
pub use workflow::*;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enums_round_trip_their_names() {
        for t in ScheduleType::ALL {
            assert_eq!(t.as_str().parse::<ScheduleType>().unwrap(), *t);
        }
        for r in RouteStrategy::ALL {
            assert_eq!(r.as_str().parse::<RouteStrategy>().unwrap(), *r);
        }
        assert_eq!(RouteStrategy::ALL.len(), 10);
    }

    #[test]
    fn unknown_enum_value_lists_allowed_values() {
        let err = "SOMETIMES".parse::<ScheduleType>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown schedule type 'SOMETIMES'; allowed: NONE, CRON, FIX_RATE, FIX_DELAY"
        );
    }

    #[test]
    fn enums_serialize_as_names() {
        let json = serde_json::to_string(&MisfireStrategy::FireOnceNow).unwrap();
        assert_eq!(json, "\"FIRE_ONCE_NOW\"");
        let back: MisfireStrategy = serde_json::from_str(&json).unwrap();
        assert_eq!(back, MisfireStrategy::FireOnceNow);
        assert!(serde_json::from_str::<MisfireStrategy>("\"LATER\"").is_err());
    }

    #[test]
    fn id_lists_parse_and_join() {
        assert_eq!(parse_id_list(" 3, 4,,5 ").unwrap(), vec![3, 4, 5]);
        assert_eq!(parse_id_list("").unwrap(), Vec::<i32>::new());
        assert_eq!(parse_id_list("3,x").unwrap_err(), "'x' is not a job id");
        assert_eq!(join_ids(&[3, 4]), "3,4");
    }

    #[test]
    fn codes_map_both_ways() {
        assert_eq!(
            AddressType::from_code(AddressType::Manual.code()),
            AddressType::Manual
        );
        assert_eq!(AddressType::from_code(7), AddressType::Auto);
        assert_eq!(Role::from_code(Role::Admin.code()), Role::Admin);
        let counts = LogCounts {
            total: 10,
            running: 2,
            success: 5,
        };
        assert_eq!(counts.failed(), 3);
    }
}
