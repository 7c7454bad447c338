//! `jobwheel import-xxl`: brings an XXL-JOB database's groups, jobs, script versions, users and
//! (optionally) run logs into jobwheel's database.
//!
//! Everything is read and translated first, so a value jobwheel cannot take stops the import
//! before anything is written. Then each row is compared with the target: created, already
//! there (a second run writes nothing), or skipped with the reason. The plan is printed and,
//! unless `--dry-run`, written: definitions in one transaction, run logs page by page.

mod mapping;
mod plan;

use std::collections::HashSet;

use clap::Args;

use crate::config::MigrateSettings;
use crate::model::RunRow;
use crate::store::xxl_source::XxlSource;
use crate::store::{PoolSettings, Store, StoreError};

pub use mapping::MappingError;
pub use plan::Tally;

/// Run logs read, compared and written at a time.
const LOG_PAGE: i64 = 1_000;

/// Flags of `jobwheel import-xxl`.
#[derive(Args, Debug, Clone)]
pub struct ImportXxlArgs {
    /// The XXL-JOB database to read, e.g. mysql://user:password@host:3306/xxl_job
    #[arg(long, value_name = "URL")]
    pub from: String,
    /// Also import run logs, keeping their ids
    #[arg(long)]
    pub include_logs: bool,
    /// Print what would be imported and write nothing
    #[arg(long)]
    pub dry_run: bool,
    /// The jobwheel database to import into
    #[command(flatten)]
    pub target: MigrateSettings,
}

/// Why an import stopped.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The source cannot be used: bad URL, unreachable, not XXL-JOB, or values jobwheel cannot
    /// take (exit code 2).
    #[error("{0}")]
    BadInput(String),
    /// Reading or writing failed on the way (exit code 1).
    #[error("{0}")]
    Failed(String),
}

impl ImportError {
    /// The process exit code: 2 for bad input, 1 for failures.
    pub fn exit_code(&self) -> u8 {
        match self {
            ImportError::BadInput(_) => 2,
            ImportError::Failed(_) => 1,
        }
    }
}

fn failed(what: &str) -> impl FnOnce(StoreError) -> ImportError + '_ {
    move |e| ImportError::Failed(format!("{what}: {e}"))
}

/// Connects to the XXL-JOB database; every way it can fail is the caller's input.
async fn open_source(url: &str) -> Result<XxlSource, ImportError> {
    XxlSource::connect(url).await.map_err(|e| match e {
        StoreError::Database(db) => {
            ImportError::BadInput(format!("cannot reach the XXL-JOB database: {db}"))
        }
        other => ImportError::BadInput(other.to_string()),
    })
}

/// Translates every row, or lists every value jobwheel cannot take.
fn map_all<X, T>(
    rows: &[X],
    map: fn(&X) -> Result<T, MappingError>,
    problems: &mut Vec<MappingError>,
) -> Vec<T> {
    rows.iter()
        .filter_map(|r| map(r).map_err(|e| problems.push(e)).ok())
        .collect()
}

/// Runs the import into the database `target_url` names and prints its report on stdout.
pub async fn run(args: &ImportXxlArgs, target_url: &str) -> Result<(), ImportError> {
    let source = open_source(&args.from).await?;
    let result = import(&source, args, target_url).await;
    source.close().await;
    result
}

async fn import(
    source: &XxlSource,
    args: &ImportXxlArgs,
    target_url: &str,
) -> Result<(), ImportError> {
    let reading = "cannot read the XXL-JOB database";
    let groups = source.groups().await.map_err(failed(reading))?;
    let jobs = source.jobs().await.map_err(failed(reading))?;
    let glue = source.glue_versions().await.map_err(failed(reading))?;
    let users = source.users().await.map_err(failed(reading))?;
    let mut problems = Vec::new();
    let groups = map_all(&groups, mapping::group, &mut problems);
    let jobs = map_all(&jobs, mapping::job, &mut problems);
    let glue = map_all(&glue, mapping::glue_version, &mut problems);
    let users = map_all(&users, mapping::user, &mut problems);
    if !problems.is_empty() {
        let list: Vec<String> = problems.iter().map(|p| format!("  {p}")).collect();
        return Err(ImportError::BadInput(format!(
            "nothing imported: {} value(s) of the XXL-JOB database have no jobwheel equivalent; \
             correct them there and run again:\n{}",
            problems.len(),
            list.join("\n")
        )));
    }

    let target = Store::connect(target_url, &PoolSettings::default())
        .await
        .map_err(|e| ImportError::BadInput(format!("cannot open the target database: {e}")))?;
    let result = import_into(source, args, &target, groups, jobs, glue, users).await;
    target.close().await;
    result
}

#[allow(clippy::too_many_arguments)]
async fn import_into(
    source: &XxlSource,
    args: &ImportXxlArgs,
    target: &Store,
    groups: Vec<crate::model::JobGroup>,
    jobs: Vec<crate::model::JobInfo>,
    glue: Vec<crate::model::GlueVersion>,
    users: Vec<crate::model::User>,
) -> Result<(), ImportError> {
    let writing = "cannot write the target database";
    // a dry run does not create jobwheel's tables: a database without them is planned as empty
    let compare_with = if args.dry_run {
        let has = target
            .has_jobwheel_tables()
            .await
            .map_err(failed("cannot read the target database"))?;
        has.then_some(target)
    } else {
        target.migrate().await.map_err(failed(writing))?;
        Some(target)
    };
    let plan = plan::plan_definitions(compare_with, groups, jobs, glue, users)
        .await
        .map_err(failed("cannot read the target database"))?;
    if !args.dry_run {
        target
            .import_definitions(&plan.batch)
            .await
            .map_err(failed(writing))?;
    }
    println!(
        "{}{}",
        source.layout().describe(),
        if args.dry_run {
            " (dry run: nothing is written)"
        } else {
            ""
        }
    );
    println!("{}", plan.groups.render("groups", args.dry_run));
    println!("{}", plan.jobs.render("jobs", args.dry_run));
    println!(
        "{}",
        plan.glue_versions.render("script versions", args.dry_run)
    );
    println!("{}", plan.users.render("users", args.dry_run));

    if args.include_logs {
        let tally = import_logs(source, compare_with, &plan.usable_jobs, args.dry_run).await?;
        println!("{}", tally.render("run logs", args.dry_run));
    } else {
        let n = source
            .count_logs()
            .await
            .map_err(failed("cannot read the XXL-JOB database"))?;
        println!("run logs: not imported ({n} in XXL-JOB; --include-logs imports them)");
    }

    if !plan.to_reset.is_empty() {
        println!(
            "users without a password ({}): XXL-JOB's password hashes cannot be reused, so an \
             administrator must set each one a new password; the next start of the admin gives \
             'admin' (or the first administrator) one if no administrator has one",
            plan.to_reset.len()
        );
        for name in &plan.to_reset {
            println!("  {name}");
        }
    }
    Ok(())
}

/// Reads, plans and (unless a dry run) writes the run logs a page at a time.
async fn import_logs(
    source: &XxlSource,
    target: Option<&Store>,
    usable_jobs: &HashSet<i32>,
    dry_run: bool,
) -> Result<Tally, ImportError> {
    let mut tally = Tally::default();
    let mut after = 0;
    loop {
        let page = source
            .logs_after(after, LOG_PAGE)
            .await
            .map_err(failed("cannot read the XXL-JOB database"))?;
        let Some(last) = page.last() else {
            return Ok(tally);
        };
        after = last.id;
        let mut logs: Vec<RunRow> = Vec::with_capacity(page.len());
        for row in &page {
            match mapping::log(row) {
                Ok(log) => logs.push(log),
                // one odd run record is not worth stopping the import for
                Err(e) => tally
                    .skipped
                    .entry(e.to_string())
                    .or_default()
                    .push(row.id.to_string()),
            }
        }
        let create = plan::plan_logs(target, usable_jobs, logs, &mut tally)
            .await
            .map_err(failed("cannot read the target database"))?;
        if !dry_run {
            target
                .ok_or_else(|| ImportError::Failed("no target database to write to".into()))?
                .import_logs(&create)
                .await
                .map_err(failed("cannot write the target database"))?;
        }
    }
}
