//! Whose fault a failure is: the one rule behind the `paragraf` binary's exit codes (2 when the invocation or its
//! data is at fault, 1 otherwise: disk, network, the encoder, a bug).
//!
//! Why a trait: the errors are defined in many crates and the exit code is decided once, in the binary. Each error
//! says whose fault it is where it is defined ([`Blame`]), each crate lists its errors once in its `fault_of`
//! function (built with [`blame`] and [`first_fault`]), and the binary asks those functions about every cause of
//! an error's chain. A new error type adds one `Blame` impl and one entry in its own crate's list.

use std::error::Error;

/// Who is at fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fault {
    /// The invocation or its input data: a file that is not ours or is damaged, a name that does not exist.
    /// Rerunning unchanged fails again.
    Input,
    /// Anything else: the disk, the network, the encoder, a bug.
    Other,
}

/// An error that knows whose fault it is.
pub trait Blame: Error + 'static {
    /// Whose fault this error is.
    fn fault(&self) -> Fault;
}

/// How a crate asks one cause whether it is one of its errors, and whose fault it is.
pub type FaultOf = fn(&(dyn Error + 'static)) -> Option<Fault>;

/// `cause`'s fault if it is an `E`, else `None`.
pub fn blame<E: Blame>(cause: &(dyn Error + 'static)) -> Option<Fault> {
    cause.downcast_ref::<E>().map(Blame::fault)
}

/// The first answer of `kinds` about `cause`.
pub fn first_fault(cause: &(dyn Error + 'static), kinds: &[FaultOf]) -> Option<Fault> {
    kinds.iter().find_map(|kind| kind(cause))
}

/// The fault of `cause` if it is one of this crate's errors.
pub fn fault_of(cause: &(dyn Error + 'static)) -> Option<Fault> {
    first_fault(
        cause,
        &[
            blame::<crate::frame::BundleError>,
            blame::<crate::names::NameError>,
            blame::<crate::strategy::UnknownStrategy>,
        ],
    )
}

impl Blame for crate::frame::BundleError {
    fn fault(&self) -> Fault {
        Fault::Input
    }
}

impl Blame for crate::names::NameError {
    fn fault(&self) -> Fault {
        Fault::Input
    }
}

impl Blame for crate::strategy::UnknownStrategy {
    fn fault(&self) -> Fault {
        Fault::Input
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::BundleError;

    #[test]
    fn a_crate_names_the_fault_of_its_own_errors_only() {
        let bundle = BundleError::TooShort { len: 3 };
        assert_eq!(fault_of(&bundle), Some(Fault::Input));
        let io = std::io::Error::other("disk");
        assert_eq!(fault_of(&io), None);
        let kinds: [FaultOf; 2] = [|_| None, |_| Some(Fault::Other)];
        assert_eq!(first_fault(&io, &kinds), Some(Fault::Other));
    }
}
