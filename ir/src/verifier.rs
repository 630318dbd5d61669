//! placeholder
use crate::function::{Function, Module};
#[derive(Debug)]
pub struct VerifyError;
pub fn verify_function(_f: &Function) -> Result<(), Vec<VerifyError>> {
    Ok(())
}
pub fn verify_module(_m: &Module) -> Result<(), Vec<VerifyError>> {
    Ok(())
}
impl std::fmt::Display for VerifyError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("todo")
    }
}
