//! The cluster scenario's configurations: what fires the jobs (jobwheel on SQLite or on the
//! `--database-url` server, or ratch-job) and with how many admins, from `--configs` or the
//! defaults.

use jobwheel::store::Backend;

/// What fires the jobs of one configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheduler {
    /// jobwheel on a fresh SQLite file.
    Sqlite,
    /// jobwheel on a scratch database of the `--database-url` server.
    Server,
    /// ratch-job (`--ratch-job BIN`) with its own storage.
    RatchJob,
}

/// Which scheduler and how many admins one configuration runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Config {
    /// What fires the jobs.
    pub scheduler: Scheduler,
    /// Admin processes.
    pub admins: usize,
}

impl Config {
    /// Parses `sqlite:1`, `pg:3`, `mysql:3`, `server:3` or `ratch-job:1`; a server name must
    /// match the `--database-url` backend (`server` takes whichever it is), and `ratch-job`
    /// needs its binary (`ratch_job`).
    pub fn parse(text: &str, server: Option<Backend>, ratch_job: bool) -> Result<Config, String> {
        let (name, admins) = text
            .split_once(':')
            .ok_or_else(|| format!("config '{text}': expected BACKEND:ADMINS, e.g. pg:3"))?;
        let admins: usize = admins
            .trim()
            .parse()
            .ok()
            .filter(|n| *n >= 1)
            .ok_or_else(|| format!("config '{text}': admins must be a number ≥ 1"))?;
        let one = |scheduler: Scheduler, what: &str| match admins {
            1 => Ok(Config { scheduler, admins }),
            _ => Err(format!("config '{text}': {what} takes one admin only")),
        };
        let wanted = match name.trim().to_ascii_lowercase().as_str() {
            "sqlite" => return one(Scheduler::Sqlite, "SQLite"),
            "ratch-job" | "ratch" if ratch_job => return one(Scheduler::RatchJob, "ratch-job"),
            "ratch-job" | "ratch" => {
                return Err(format!(
                    "config '{text}' needs --ratch-job (the path of a ratchjob binary)"
                ))
            }
            "pg" | "postgres" | "postgresql" => Some(Backend::Postgres),
            "mysql" | "mariadb" => Some(Backend::MySql),
            "server" => None,
            other => return Err(format!("config '{text}': unknown backend '{other}'")),
        };
        match (server, wanted) {
            (None, _) => Err(format!(
                "config '{text}' needs --database-url (a PostgreSQL or MySQL server)"
            )),
            (Some(s), Some(w)) if s != w => Err(format!(
                "config '{text}': --database-url is {}, not {}",
                s.name(),
                w.name()
            )),
            _ => Ok(Config {
                scheduler: Scheduler::Server,
                admins,
            }),
        }
    }

    /// The default list: SQLite with one admin, ratch-job when its binary is given, then the
    /// server with each of `admins` counts.
    pub fn defaults(server: Option<Backend>, admins: &[usize], ratch_job: bool) -> Vec<Config> {
        let mut out = vec![Config {
            scheduler: Scheduler::Sqlite,
            admins: 1,
        }];
        if ratch_job {
            out.push(Config {
                scheduler: Scheduler::RatchJob,
                admins: 1,
            });
        }
        if server.is_some() {
            out.extend(admins.iter().map(|&n| Config {
                scheduler: Scheduler::Server,
                admins: n.max(1),
            }));
        }
        out
    }

    /// How the tables name it.
    pub fn label(&self, server: &str) -> String {
        let backend = match self.scheduler {
            Scheduler::Sqlite => "sqlite",
            Scheduler::Server => server,
            Scheduler::RatchJob => return "ratch-job, 1 node".into(),
        };
        let s = if self.admins == 1 { "" } else { "s" };
        format!("{backend}, {} admin{s}", self.admins)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configs_parse_and_check_the_server() {
        let pg = Some(Backend::Postgres);
        assert_eq!(
            Config::parse("sqlite:1", None, false),
            Ok(Config {
                scheduler: Scheduler::Sqlite,
                admins: 1
            })
        );
        assert_eq!(
            Config::parse("pg:3", pg, false),
            Ok(Config {
                scheduler: Scheduler::Server,
                admins: 3
            })
        );
        assert!(Config::parse("server:2", pg, false).is_ok());
        assert!(Config::parse("sqlite:3", pg, false).is_err());
        assert!(Config::parse("mysql:1", pg, false).is_err());
        assert!(Config::parse("pg:1", None, false).is_err());
        assert!(Config::parse("pg:0", pg, false).is_err());
        assert!(Config::parse("pg", pg, false).is_err());
        assert_eq!(Config::defaults(None, &[1, 3], false).len(), 1);
        assert_eq!(Config::defaults(pg, &[1, 3], false).len(), 3);
    }

    #[test]
    fn ratch_job_needs_its_binary_and_runs_one_node() {
        let ratch = Config {
            scheduler: Scheduler::RatchJob,
            admins: 1,
        };
        assert_eq!(Config::parse("ratch-job:1", None, true), Ok(ratch));
        assert_eq!(Config::parse("ratch:1", None, true), Ok(ratch));
        let missing = Config::parse("ratch-job:1", None, false).unwrap_err();
        assert!(missing.contains("--ratch-job"), "{missing}");
        assert!(Config::parse("ratch-job:3", None, true).is_err());
        let defaults = Config::defaults(None, &[1], true);
        assert_eq!(defaults.len(), 2);
        assert_eq!(defaults[1], ratch);
        assert_eq!(ratch.label("postgres"), "ratch-job, 1 node");
    }
}
