//! Where md-workbench's datasets and objects live: `<rank>_<d>/file-<i>` in
//! one tree (posix directories, or one bucket with rank-prefixed keys), or a
//! bucket per dataset (`mdwbx<rank>x<d>`, keys `file-<i>`) as md-workbench's
//! S3 plugin does with `-b`.

use crate::storage::{S3Mode, S3Storage, StorageApi};
use s3hpc_client::S3Client;
use std::fmt::Write as _;
use std::sync::Arc;

/// How S3 backends place the datasets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DatasetMode {
    /// One bucket; a dataset is a key prefix `<rank>_<d>/`.
    #[default]
    SingleBucket,
    /// A bucket per dataset, created and deleted with it.
    BucketPerDataset,
}

impl DatasetMode {
    pub fn as_str(self) -> &'static str {
        match self {
            DatasetMode::SingleBucket => "single-bucket",
            DatasetMode::BucketPerDataset => "bucket-per-dataset",
        }
    }
}

impl std::str::FromStr for DatasetMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "single-bucket" => Ok(DatasetMode::SingleBucket),
            "bucket-per-dataset" => Ok(DatasetMode::BucketPerDataset),
            _ => Err(format!(
                "unknown dataset mode {s:?}: use single-bucket or bucket-per-dataset"
            )),
        }
    }
}

pub enum Layout {
    /// Every dataset in one storage tree.
    Shared(Arc<dyn StorageApi>),
    /// One single-bucket storage per dataset, indexed `rank * datasets + d`.
    PerDataset {
        buckets: Vec<S3Storage>,
        datasets: usize,
    },
}

impl Layout {
    pub fn new(
        storage: Arc<dyn StorageApi>,
        client: Option<Arc<dyn S3Client>>,
        mode: DatasetMode,
        ranks: usize,
        datasets: usize,
    ) -> Layout {
        match (mode, client) {
            (DatasetMode::BucketPerDataset, Some(client)) => Layout::PerDataset {
                buckets: (0..ranks * datasets)
                    .map(|i| {
                        let name = format!("mdwbx{}x{}", i / datasets, i % datasets);
                        S3Storage::new(client.clone(), S3Mode::SingleBucket, &name)
                    })
                    .collect(),
                datasets,
            },
            _ => Layout::Shared(storage),
        }
    }

    /// The storage holding dataset `(rank, d)`.
    pub fn storage(&self, rank: usize, d: usize) -> &dyn StorageApi {
        match self {
            Layout::Shared(s) => &**s,
            Layout::PerDataset { buckets, datasets } => &buckets[rank * datasets + d],
        }
    }

    /// Writes the path of object `i` of dataset `(rank, d)` into `path`.
    pub fn object_path(&self, path: &mut String, rank: usize, d: usize, i: u64) {
        path.clear();
        if let Layout::Shared(_) = self {
            let _ = write!(path, "{rank}_{d}/");
        }
        let _ = write!(path, "file-{i}");
    }

    pub fn create_dataset(&self, rank: usize, d: usize) -> anyhow::Result<()> {
        match self {
            Layout::Shared(s) => s.mkdir(&format!("{rank}_{d}")),
            Layout::PerDataset { .. } => self.storage(rank, d).setup(),
        }
    }

    pub fn remove_dataset(&self, rank: usize, d: usize) -> anyhow::Result<()> {
        match self {
            Layout::Shared(s) => s.rmdir(&format!("{rank}_{d}")),
            Layout::PerDataset { .. } => self.storage(rank, d).teardown(),
        }
    }
}
