//! Placeholder with the analysis' API (conservative facts only); the real
//! analysis replaces this file.
use tawa_ir::{Function, SecondaryMap, Value};

#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct AxisInfo {
    pub contiguity: Vec<u32>,
    pub divisibility: Vec<u32>,
    pub constancy: Vec<u32>,
}

pub struct AxisInfoMap {
    map: SecondaryMap<Value, AxisInfo>,
}

impl AxisInfoMap {
    pub fn get(&self, v: Value) -> &AxisInfo {
        &self.map[v]
    }
}

pub fn analyze(_func: &Function) -> AxisInfoMap {
    AxisInfoMap {
        map: SecondaryMap::new(),
    }
}

pub fn vector_width(
    _ptr: &AxisInfo,
    _mask: Option<&AxisInfo>,
    _dim: usize,
    _elem_bytes: u32,
    _max_elems: u32,
) -> u32 {
    1
}
