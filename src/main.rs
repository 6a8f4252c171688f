use std::process::ExitCode;

fn main() -> ExitCode {
    perfz::cli::main()
}
