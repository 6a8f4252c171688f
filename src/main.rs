//! The `perfz` command; the library's [`perfz::main`] parses the arguments and runs it.

use std::process::ExitCode;

fn main() -> ExitCode {
    perfz::main()
}
