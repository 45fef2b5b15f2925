//! `never!`: a fallback that only a bug can reach.
//!
//! Where a value cannot be out of range unless Tokensmith itself is wrong (an index the
//! loader bounded, a cell the legality check already found on the board), quietly taking
//! a fallback would turn the bug into a wrong answer. `never!(fallback, "message", ..)`
//! panics with the message in debug builds, so tests find the bug; a release build says
//! so once on stderr (per place in the code) and goes on with the fallback. A value a
//! file, a script or a user controls is never a case for it: that gets a real error.

/// `never!(fallback, "format", args..)`: see the module documentation.
macro_rules! never {
    ($fallback:expr, $($message:tt)+) => {{
        if cfg!(debug_assertions) {
            panic!("internal error: {}", format_args!($($message)+));
        } else {
            static TOLD: std::sync::Once = std::sync::Once::new();
            TOLD.call_once(|| {
                eprintln!(
                    "tokensmith: internal error (please report it): {}",
                    format_args!($($message)+)
                );
            });
            $fallback
        }
    }};
}

pub(crate) use never;

#[cfg(test)]
mod tests {
    #[test]
    #[should_panic(expected = "internal error: index 70000 is out of range")]
    #[cfg(debug_assertions)]
    fn a_debug_build_stops_at_the_bug() {
        let index = 70_000_usize;
        let _: u16 = u16::try_from(index)
            .unwrap_or_else(|_| never!(u16::MAX, "index {index} is out of range"));
    }

    #[test]
    #[cfg(not(debug_assertions))]
    fn a_release_build_takes_the_fallback() {
        let index = 70_000_usize;
        let id: u16 = u16::try_from(index)
            .unwrap_or_else(|_| never!(u16::MAX, "index {index} is out of range"));
        assert_eq!(id, u16::MAX);
    }
}
