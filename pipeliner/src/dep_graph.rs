//! The dependence graph of a loop body, the structure the pipeliner's
//! schedules are decided on.
//!
//! Nodes are the ops at the top level of the body block (an op with
//! regions stands for everything inside it). An edge `a → b` says that
//! `b` uses a value `a` defines: in the same iteration (`distance` 0), or
//! in the next one through the loop's `yield` and iteration argument
//! (`distance` 1, Triton's and modulo scheduling's loop-carried
//! dependence). Ops using an iteration argument that nothing in the body
//! defines (the induction variable, an argument yielded unchanged) have no
//! edge for it.

use std::collections::{HashMap, HashSet};

use petgraph::graph::{DiGraph, NodeIndex};
use petgraph::visit::{Dfs, EdgeFiltered, EdgeRef, IntoNeighbors, Reversed, Visitable};
use petgraph::Direction;
use tawa_ir::function::{Block, Op, Value, ValueDef};
use tawa_ir::{Function, OpKind};

/// One dependence: `value`, defined by the edge's source, is used by its
/// target `distance` iterations later.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dep {
    pub value: Value,
    pub distance: u32,
}

/// The dependence graph of one loop body.
pub struct LoopGraph {
    pub body: Block,
    pub graph: DiGraph<Op, Dep>,
    node_of: HashMap<Op, NodeIndex>,
}

impl LoopGraph {
    /// The graph of the body of `for` op `the_loop`.
    pub fn of_loop(func: &Function, the_loop: Op) -> LoopGraph {
        let body = func.ops[the_loop].regions[0];
        let mut graph = DiGraph::new();
        let mut node_of = HashMap::new();
        for &op in &func.blocks[body].ops {
            node_of.insert(op, graph.add_node(op));
        }
        // Which top-level op each value of the body comes from, and which
        // iteration argument each yielded value becomes.
        let mut top_def: HashMap<Value, Op> = HashMap::new();
        for &op in &func.blocks[body].ops {
            for &r in &func.ops[op].results {
                top_def.insert(r, op);
            }
        }
        let args = &func.blocks[body].args;
        let yield_op = func.blocks[body].ops.last().copied();
        let mut carried_from: HashMap<Value, Value> = HashMap::new();
        if let Some(y) = yield_op {
            for (j, &v) in func.ops[y].operands.iter().enumerate() {
                if let Some(&arg) = args.get(j + 1) {
                    carried_from.insert(arg, v);
                }
            }
        }
        for &op in &func.blocks[body].ops {
            let mut used = Vec::new();
            collect_uses(func, op, &mut used);
            for v in used {
                if let Some(&def) = top_def.get(&v) {
                    graph.add_edge(
                        node_of[&def],
                        node_of[&op],
                        Dep {
                            value: v,
                            distance: 0,
                        },
                    );
                } else if let Some(def) = carried_from.get(&v).and_then(|y| top_def.get(y)) {
                    graph.add_edge(
                        node_of[def],
                        node_of[&op],
                        Dep {
                            value: v,
                            distance: 1,
                        },
                    );
                }
            }
        }
        LoopGraph {
            body,
            graph,
            node_of,
        }
    }

    /// The ops using `value` in the same iteration, with the operand
    /// positions where the use is direct (an op with regions that uses it
    /// inside reports no position).
    pub fn users(&self, func: &Function, def: Op, value: Value) -> Vec<(Op, Option<usize>)> {
        let Some(&n) = self.node_of.get(&def) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for e in self.graph.edges_directed(n, Direction::Outgoing) {
            let dep = e.weight();
            if dep.value != value || dep.distance != 0 {
                continue;
            }
            let user = self.graph[e.target()];
            let direct = func.ops[user].operands.iter().position(|&o| o == value);
            if out.iter().all(|&(u, _)| u != user) {
                out.push((user, direct));
            }
        }
        out
    }

    /// Top-level ops that depend on any of `from`, transitively: through
    /// values of the same iteration, and with `carried` also through the
    /// loop's carried values (the next iteration's uses). `from` itself is
    /// included only where it depends on itself.
    pub fn dependents(&self, from: &[Op], carried: bool) -> HashSet<Op> {
        let edges = EdgeFiltered::from_fn(&self.graph, |e| carried || e.weight().distance == 0);
        self.reach(&edges, from)
    }

    /// Top-level ops that `of` depends on in the same iteration,
    /// transitively.
    pub fn dependences(&self, of: &[Op]) -> HashSet<Op> {
        let edges = EdgeFiltered::from_fn(&self.graph, |e| e.weight().distance == 0);
        self.reach(Reversed(&edges), of)
    }

    fn reach<G>(&self, graph: G, from: &[Op]) -> HashSet<Op>
    where
        G: IntoNeighbors<NodeId = NodeIndex> + Visitable,
    {
        let mut out = HashSet::new();
        for op in from {
            let Some(&start) = self.node_of.get(op) else {
                continue;
            };
            // Start from the successors so that `from` counts only when it
            // is reached again.
            for next in graph.neighbors(start) {
                let mut dfs = Dfs::new(graph, next);
                while let Some(n) = dfs.next(graph) {
                    out.insert(self.graph[n]);
                }
            }
        }
        out
    }

    /// The top-level ops using a result of `op` in the same iteration.
    pub fn users_of(&self, op: Op) -> Vec<Op> {
        let Some(&n) = self.node_of.get(&op) else {
            return Vec::new();
        };
        let mut out: Vec<Op> = self
            .graph
            .edges_directed(n, Direction::Outgoing)
            .filter(|e| e.weight().distance == 0)
            .map(|e| self.graph[e.target()])
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// Whether `op` is an op of the body's top level.
    pub fn contains(&self, op: Op) -> bool {
        self.node_of.contains_key(&op)
    }

    /// Position of `op` in the body, for "comes after" questions.
    pub fn position(&self, op: Op) -> Option<usize> {
        self.node_of.get(&op).map(|n| n.index())
    }
}

/// Every value `op` uses, its regions' ops included (values defined
/// inside the regions are left out: they are not dependences of `op`).
fn collect_uses(func: &Function, op: Op, out: &mut Vec<Value>) {
    let data = &func.ops[op];
    out.extend(data.operands.iter().copied());
    for &r in &data.regions {
        let mut inner = Vec::new();
        func.walk_block(r, &mut |o| {
            inner.extend(func.ops[o].operands.iter().copied())
        });
        out.extend(inner.into_iter().filter(|&v| !defined_inside(func, v, op)));
    }
}

/// Whether `v` is defined in a region of `op` (at any depth).
fn defined_inside(func: &Function, v: Value, op: Op) -> bool {
    let mut block = match func.values[v].def {
        ValueDef::Arg(b, _) => b,
        ValueDef::Result(o, _) => match func.block_of(o) {
            Some(b) => b,
            None => return false,
        },
    };
    loop {
        match func.blocks[block].parent {
            Some(p) if p == op => return true,
            Some(p) => match func.block_of(p) {
                Some(b) => block = b,
                None => return false,
            },
            None => return false,
        }
    }
}

/// Whether `op` is a `dot` (async or not).
pub fn is_dot(func: &Function, op: Op) -> bool {
    matches!(func.ops[op].kind, OpKind::Dot { .. })
}
