//! The `jobwheel` command line: parses flags and starts the chosen mode.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::parser::ValueSource;
use clap::{ArgMatches, CommandFactory, FromArgMatches, Parser, Subcommand};

use crate::config::{
    AdminSettings, ConfigError, ExecutorSettings, MigrateSettings, Sources, StandaloneSettings,
};
use crate::executor::Executor;
use crate::import_xxl::ImportXxlArgs;
use crate::startup::Admin;
use crate::store::{PoolSettings, Store};

/// jobwheel: a distributed job scheduler, wire-compatible with XXL-JOB.
#[derive(Parser, Debug)]
#[command(name = "jobwheel", version, about, after_help = SOURCES_HELP)]
pub struct Cli {
    /// The `--config` settings file.
    #[arg(
        long,
        global = true,
        env = "JOBWHEEL_CONFIG",
        value_name = "FILE",
        help = "TOML file with settings (keys are the flag names; [admin]/[executor] sections optional)"
    )]
    pub config: Option<PathBuf>,
    /// Mode to run; without one, `standalone`
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub standalone: StandaloneSettings,
}

/// Told under every mode's flags.
const SOURCES_HELP: &str = "Every flag can also be set as an environment variable named \
    JOBWHEEL_<FLAG> (e.g. JOBWHEEL_BIND, JOBWHEEL_DATABASE_URL) or as a key of the --config file \
    (e.g. bind = \"0.0.0.0:8080\"). A flag beats its variable, which beats the file.";

/// The modes.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Admin plus an in-process executor with demo handlers (the default)
    #[command(after_help = SOURCES_HELP)]
    Standalone(StandaloneSettings),
    /// The scheduling center: scheduler, REST API, executor API
    #[command(after_help = SOURCES_HELP)]
    Admin(AdminSettings),
    /// A standalone executor for script jobs and the built-in handlers
    #[command(after_help = SOURCES_HELP)]
    Executor(ExecutorSettings),
    /// Apply database migrations and exit
    #[command(after_help = SOURCES_HELP)]
    Migrate(MigrateSettings),
    /// Import groups, jobs, users and (with --include-logs) run logs from an XXL-JOB database
    #[command(after_help = SOURCES_HELP)]
    ImportXxl(ImportXxlArgs),
}

/// Entry point of the binary: exit code 0 on a clean stop, 2 for bad settings, 1 for failures.
pub fn main() -> ExitCode {
    crate::allocator::tune();
    let matches = match Cli::command().try_get_matches() {
        Ok(matches) => matches,
        // a bad value is one line naming the flag, like a bad value in a file
        Err(e) if e.kind() == ErrorKind::ValueValidation => {
            return config_failure(ConfigError(one_line(&e)));
        }
        Err(e) => e.exit(),
    };
    init_logging();
    let config = matches.get_one::<PathBuf>("config");
    let file = match Sources::read(config.map(PathBuf::as_path)) {
        Ok(sources) => sources,
        Err(e) => return config_failure(e),
    };
    let (mode, flags) = match matches.subcommand() {
        None => ("standalone", &matches),
        Some(mode) => {
            // flags before a subcommand belong to standalone mode and would be silently lost
            if let Some(flag) = flag_before_subcommand(&matches) {
                return config_failure(ConfigError(format!(
                    "--{flag} must follow the subcommand, e.g. 'jobwheel admin --{flag} ...'"
                )));
            }
            mode
        }
    };
    match mode {
        "admin" => match AdminSettings::resolve(flags, &file) {
            Ok(settings) => run(run_admin(settings)),
            Err(e) => config_failure(e),
        },
        "executor" => match ExecutorSettings::resolve(flags, &file) {
            Ok(settings) => run(run_executor(settings)),
            Err(e) => config_failure(e),
        },
        "migrate" => match MigrateSettings::resolve(flags, &file) {
            Ok(settings) => run(run_migrate(settings.database_url)),
            Err(e) => config_failure(e),
        },
        "import-xxl" => {
            let args = ImportXxlArgs::from_arg_matches(flags).unwrap_or_else(|e| e.exit());
            match MigrateSettings::resolve(flags, &file) {
                Ok(target) => run_import(args, target.database_url),
                Err(e) => config_failure(e),
            }
        }
        _ => match StandaloneSettings::resolve(flags, &file) {
            Ok(settings) => run(run_standalone(settings)),
            Err(e) => config_failure(e),
        },
    }
}

/// A standalone flag typed before a subcommand would be silently lost; environment variables
/// fill the same arguments and are fine.
fn flag_before_subcommand(matches: &ArgMatches) -> Option<String> {
    matches
        .ids()
        .map(|id| id.as_str())
        .filter(|id| *id != "config")
        .find(|id| matches.value_source(id) == Some(ValueSource::CommandLine))
        .map(|id| id.replace('_', "-"))
}

/// `invalid --port '70000': 70000 is not in 0..=65535`, as a bad value from a file reads.
pub(crate) fn one_line(e: &clap::Error) -> String {
    let context = |kind| match e.get(kind) {
        Some(ContextValue::String(s)) => s.clone(),
        _ => String::new(),
    };
    let flag = context(ContextKind::InvalidArg);
    let flag = flag.split_whitespace().next().unwrap_or_default();
    let why = std::error::Error::source(e).map_or_else(|| e.kind().to_string(), |c| c.to_string());
    format!(
        "invalid {flag} '{}': {why}",
        context(ContextKind::InvalidValue)
    )
}

fn init_logging() {
    let env = env_logger::Env::default().default_filter_or("info");
    // a second init (tests calling main twice) is harmless
    let _ = env_logger::Builder::from_env(env).try_init();
}

fn config_failure(e: ConfigError) -> ExitCode {
    eprintln!("jobwheel: {e}");
    ExitCode::from(2)
}

/// Runs a mode on an actix system; its error becomes one line and exit code 1.
fn run<F>(mode: F) -> ExitCode
where
    F: std::future::Future<Output = Result<(), String>> + 'static,
{
    match actix_web::rt::System::new().block_on(mode) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("jobwheel: {e}");
            ExitCode::from(1)
        }
    }
}

async fn run_admin(settings: AdminSettings) -> Result<(), String> {
    let admin = Admin::build(&settings).await.map_err(|e| e.to_string())?;
    admin.run_until_stopped().await.map_err(|e| e.to_string())
}

async fn run_standalone(settings: StandaloneSettings) -> Result<(), String> {
    let admin = Admin::build_standalone(&settings.admin, &settings.executor)
        .await
        .map_err(|e| e.to_string())?;
    admin.run_until_stopped().await.map_err(|e| e.to_string())
}

/// Runs `jobwheel executor`: the builder wired from its settings, with the built-in handlers; it
/// trims memory after reaping, since the process's allocator is its own.
async fn run_executor(settings: ExecutorSettings) -> Result<(), String> {
    let mut builder = Executor::builder()
        .admin_addresses(settings.admin_addresses)
        .app_name(settings.app_name)
        .port(settings.port)
        .bind(settings.bind)
        .log_path(settings.local.log_path)
        .log_retention_days(settings.log_retention_days)
        .idle_timeout(settings.local.idle_timeout)
        .max_concurrent_runs(settings.local.max_concurrent_runs)
        .labels(settings.local.label.clone())
        .admin_protocol(settings.admin_protocol)
        .glue_enabled(settings.local.glue_enabled)
        .http_job_allow_private(settings.local.http_job_allow_private)
        .trim_memory_after_reaping(true);
    if let Some(token) = settings.access_token {
        builder = builder.access_token(token);
    }
    if settings.insecure {
        builder = builder.insecure_no_access_token();
    }
    if let Some(address) = settings.address {
        builder = builder.address(address);
    }
    if let Some(ip) = settings.ip {
        builder = builder.ip(ip.to_string());
    }
    let executor = builder
        .with_builtin_handlers()
        .build()
        .map_err(|e| e.to_string())?;
    let server = executor
        .serve_until_signalled()
        .await
        .map_err(|e| e.to_string())?;
    server.run_until_stopped().await.map_err(|e| e.to_string())
}

async fn run_migrate(url: String) -> Result<(), String> {
    let store = Store::connect(&url, &PoolSettings::default())
        .await
        .map_err(|e| e.to_string())?;
    store.migrate().await.map_err(|e| e.to_string())?;
    store.close().await;
    println!("migrations applied ({})", store.backend().name());
    Ok(())
}

/// Runs `import-xxl`: exit code 2 for a source it cannot use, 1 when reading or writing fails.
fn run_import(args: ImportXxlArgs, target_url: String) -> ExitCode {
    let result = actix_web::rt::System::new()
        .block_on(async move { crate::import_xxl::run(&args, &target_url).await });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("jobwheel: {e}");
            ExitCode::from(e.exit_code())
        }
    }
}
