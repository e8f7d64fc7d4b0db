"""Synthetic generators and loaders of real data.

- :mod:`.synthetic` — eigengap sphere-PCA data (Han et al. (2024) §5.1, Huang et al. (2024) §6.1), bounded Wishart SPD samples
  (Han et al. (2024) §5.2, Huang et al. (2024) §6.2), Gaussian kPCA data (Li and Ma (2023) §5.2).
- :mod:`.partition` — splits of a data set into N agents (equal, given sizes, Dirichlet).
- :mod:`.real` — MNIST (IDX), Iris/Wine/digits (scikit-learn), PathMNIST (MedMNIST .npz), preprocessing.
- :mod:`.descriptors` — region covariance descriptors (TPM06), the 9×9 SPD data of Huang et al. (2024) §6.2.
- :mod:`.wordnet` — WordNet mammal closure, Lorentz embedding, Laplacian eigenmap, HSP data (Huang et al. (2024) §6.3).

Notes: proofs_notes/data_generators.md, data_real.md, data_hsp.md.
"""

from . import descriptors, partition, real, synthetic, wordnet

__all__ = ["descriptors", "partition", "real", "synthetic", "wordnet"]
