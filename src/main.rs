//! The `perfz` command; the library's [`perfz::cli`] parses the arguments and runs it.

use std::process::ExitCode;

fn main() -> ExitCode {
    perfz::cli::main()
}
