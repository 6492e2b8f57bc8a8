//! A lab's named workloads, and the ones a run's `--workloads` chose.

use anyhow::{bail, Result};

/// A workload: a name and what it measures.
#[derive(Debug, Clone, Copy)]
pub struct Workload {
    /// Its name, as `--workloads` takes it.
    pub name: &'static str,
    /// What it measures.
    pub description: &'static str,
}

/// The workloads of `all` named in `names`, in `all`'s order; all of them
/// when `names` is empty. An unknown name fails, listing the known ones.
pub(crate) fn choose(all: &[Workload], names: &[String]) -> Result<Vec<Workload>> {
    if let Some(unknown) = names
        .iter()
        .find(|n| !all.iter().any(|w| w.name == n.as_str()))
    {
        bail!(
            "unknown workload {unknown}; they are: {}",
            all.iter().map(|w| w.name).collect::<Vec<_>>().join(", ")
        );
    }
    Ok(all
        .iter()
        .copied()
        .filter(|w| names.is_empty() || names.iter().any(|n| n == w.name))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [Workload; 3] = [
        Workload {
            name: "a",
            description: "",
        },
        Workload {
            name: "b",
            description: "",
        },
        Workload {
            name: "c",
            description: "",
        },
    ];

    fn names(chosen: &[Workload]) -> Vec<&str> {
        chosen.iter().map(|w| w.name).collect()
    }

    #[test]
    fn chosen_in_table_order() -> Result<()> {
        let given = |list: &[&str]| list.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>();
        assert_eq!(names(&choose(&ALL, &[])?), ["a", "b", "c"]);
        assert_eq!(names(&choose(&ALL, &given(&["c", "a"]))?), ["a", "c"]);
        let err = choose(&ALL, &given(&["a", "d"])).map(|_| ()).err();
        assert_eq!(
            err.map(|e| e.to_string()).as_deref(),
            Some("unknown workload d; they are: a, b, c")
        );
        Ok(())
    }
}
