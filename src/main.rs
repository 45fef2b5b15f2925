//! The `tokensmith` binary: the command line.

fn main() -> std::process::ExitCode {
    tokensmith::cli::main()
}
