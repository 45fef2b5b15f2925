//! The `tokensmith` binary: the command line.

#![deny(unsafe_code)]

/// mimalloc instead of the system's allocator: Lua allocates a table for every token a
/// script reads, and random playouts of scripted content spent about 15 % of their time
/// in the system's `malloc` and `free` (docs/ai.md, "Where a scripted game's time goes").
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    tokensmith::cli::main()
}
