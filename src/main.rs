//! The `jobwheel` binary; everything lives in the library.

fn main() -> std::process::ExitCode {
    jobwheel::cli::main()
}
