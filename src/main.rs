//! The `tokensmith` binary: the command line.

/// mimalloc instead of the system's allocator: Lua allocates a table for every token a
/// script reads, and simulations spend a tenth of their time in `malloc` and `free`
/// (see docs/ai.md, "Replaying hook calls").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    tokensmith::cli::main()
}
