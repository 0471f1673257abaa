//! The Slurm job a run is part of, from the variables Slurm sets in every
//! job and step, recorded with the results (as IO500 results record the
//! nodes and tasks per node) so that a result file says on what geometry
//! it was measured. Absent outside Slurm.

use serde::Serialize;

/// A Slurm job's geometry. Job-wide variables come first where Slurm sets
/// both (`SLURM_JOB_NUM_NODES` over the step's `SLURM_NNODES`); fields
/// Slurm did not set stay out of the JSON.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SlurmJob {
    pub job_id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partition: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nodes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nodelist: Option<String>,
    /// Tasks of the job (or step), `SLURM_NTASKS`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ntasks: Option<u64>,
    /// `--ntasks-per-node` when the job asked for it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ntasks_per_node: Option<u64>,
    /// Slurm's own account of tasks per node, e.g. `2(x3),1`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tasks_per_node: Option<String>,
}

impl SlurmJob {
    /// The job this process runs in, if any.
    pub fn from_env() -> Option<SlurmJob> {
        Self::from_vars(|k| std::env::var(k).ok())
    }

    /// The job described by `var` (a lookup of Slurm's variables); `None`
    /// without a job id.
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Option<SlurmJob> {
        let get = |names: &[&str]| names.iter().find_map(|n| var(n).filter(|v| !v.is_empty()));
        let num = |names: &[&str]| get(names).and_then(|v| v.parse().ok());
        Some(SlurmJob {
            job_id: get(&["SLURM_JOB_ID", "SLURM_JOBID"])?,
            step_id: get(&["SLURM_STEP_ID", "SLURM_STEPID"]),
            cluster: get(&["SLURM_CLUSTER_NAME"]),
            partition: get(&["SLURM_JOB_PARTITION"]),
            nodes: num(&["SLURM_JOB_NUM_NODES", "SLURM_NNODES"]),
            nodelist: get(&["SLURM_JOB_NODELIST", "SLURM_NODELIST"]),
            ntasks: num(&["SLURM_NTASKS", "SLURM_NPROCS"]),
            ntasks_per_node: num(&["SLURM_NTASKS_PER_NODE"]),
            tasks_per_node: get(&["SLURM_TASKS_PER_NODE", "SLURM_STEP_TASKS_PER_NODE"]),
        })
    }

    /// One line for text output: `Slurm job 42 on cluster c, partition p:
    /// 2 nodes (node[1-2]), 4 tasks, tasks per node 2(x2)`.
    pub fn line(&self) -> String {
        let mut s = format!("Slurm job {}", self.job_id);
        let place: Vec<String> = [("cluster", &self.cluster), ("partition", &self.partition)]
            .into_iter()
            .filter_map(|(what, v)| v.as_ref().map(|v| format!("{what} {v}")))
            .collect();
        if !place.is_empty() {
            s += &format!(" on {}", place.join(", "));
        }
        let mut geometry = Vec::new();
        if let Some(n) = self.nodes {
            geometry.push(match &self.nodelist {
                Some(l) => format!("{n} nodes ({l})"),
                None => format!("{n} nodes"),
            });
        }
        if let Some(n) = self.ntasks {
            geometry.push(format!("{n} tasks"));
        }
        match (self.ntasks_per_node, &self.tasks_per_node) {
            (Some(n), _) => geometry.push(format!("{n} tasks per node")),
            (None, Some(t)) => geometry.push(format!("tasks per node {t}")),
            (None, None) => {}
        }
        if !geometry.is_empty() {
            s += &format!(": {}", geometry.join(", "));
        }
        s
    }
}

/// Adds `slurm` to a result file's `run` object when this process runs in
/// a Slurm job.
pub fn record(run: &mut serde_json::Value) {
    if let (Some(job), Some(obj)) = (SlurmJob::from_env(), run.as_object_mut()) {
        obj.insert("slurm".into(), serde_json::json!(job));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn job(vars: &[(&str, &str)]) -> Option<SlurmJob> {
        let m: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        SlurmJob::from_vars(|k| m.get(k).cloned())
    }

    #[test]
    fn geometry_from_slurm_variables() {
        assert_eq!(job(&[]), None);
        assert_eq!(job(&[("SLURM_NNODES", "2")]), None, "no job id, no job");
        let j = job(&[
            ("SLURM_JOB_ID", "42"),
            ("SLURM_CLUSTER_NAME", "c"),
            ("SLURM_JOB_NUM_NODES", "3"),
            // The step's count gives way to the job's.
            ("SLURM_NNODES", "1"),
            ("SLURM_JOB_NODELIST", "node[1-3]"),
            ("SLURM_NTASKS", "6"),
            ("SLURM_TASKS_PER_NODE", "2(x3)"),
        ])
        .unwrap();
        assert_eq!(j.nodes, Some(3));
        assert_eq!(
            j.line(),
            "Slurm job 42 on cluster c: 3 nodes (node[1-3]), 6 tasks, tasks per node 2(x3)"
        );
        let json = serde_json::to_value(&j).unwrap();
        assert_eq!(json["tasks_per_node"], "2(x3)");
        assert!(json.get("partition").is_none() && json.get("step_id").is_none());
        let j = job(&[("SLURM_JOBID", "7"), ("SLURM_NTASKS_PER_NODE", "4")]).unwrap();
        assert_eq!(j.line(), "Slurm job 7: 4 tasks per node");
    }
}
