//! A refusal: the user's to fix (a bad argument, missing or broken data), as opposed to a failure of the disk,
//! the network or the encoder. It decides the exit code (2) and, in MCP, an `invalid_params` error.

use paragraf_format::fault::{Blame, Fault};

/// A refusal the user can fix (bad argument, missing or broken data): exit code 2, and in MCP an
/// `invalid_params` error rather than an internal one.
#[derive(Debug)]
pub struct Refusal(pub String);

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Refusal {}

/// `bail!` with a [`Refusal`].
macro_rules! refuse {
    ($($arg:tt)*) => { return Err(anyhow::Error::new($crate::cmd::refusal::Refusal(format!($($arg)*)))) };
}
pub(crate) use refuse;

/// Whether `error` (or what it wraps) is a [`Refusal`].
pub fn is_refusal(error: &anyhow::Error) -> bool {
    error.chain().any(|e| e.is::<Refusal>())
}

impl Blame for Refusal {
    fn fault(&self) -> Fault {
        Fault::Input
    }
}
