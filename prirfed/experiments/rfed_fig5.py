"""``rfed-fig5``: Figure 5 of 002 (Section 5.3), kPCA (3) on the Iris data set (d = 4, r = 2).

002 Section 5.3: "We focus on the kPCA problem (3) here. [...] For all three datasets, we calculate
the first r principal directions and the true optimal loss value directly. We can thus compute the
principal angles between the iterate and the ground truth. The experiments are repeated and
averaged for 10 random initializations. For the first two datasets, we randomly partition the
datasets into 10 agents and at each iteration we take k = 5 agents. The Figures 5 and 6 show that
RFedSVRG is able to effectively decrease the norm of Riemannian gradient and the principal angles
while the other two are not as efficient." Caption: "The data is in R^4 (d = 4) and we take r = 2.
The first figure is the norm of Riemannian gradient ||grad f(x_t)|| and the second is the
principal angle between x_t and the true solution x*."

Not stated by 002, and absent from the authors' public code (no real-data script): our choices,
recorded in config.json: tau = 5 for the three algorithms (002's Figure 7 caption, the only
real-data tau printed); T = 600 rounds (002's PCA limit); the same step eta = 0.5 / L_max for the
three algorithms, L_max = max_i lambda_max(A_i) the largest agent smoothness constant; mu = n/10
(002's PCA choice); records centred (principal directions of the data); each repetition draws
a new random partition and a new x_0 ("10 random initializations"). Retraction and its inverse in
place of Exp and Log (002 section 5). Data: scikit-learn's bundled Iris (002's [10]).

Modes: ``full`` 10 repetitions; ``quick`` 3 repetitions of 300 rounds; ``tiny`` 2 of 40. The
definition is shared with rfed-fig6: :func:`prirfed.experiments.rfed_common.real_kpca_experiment`.
Proofs note: ``proofs_notes/experiment_rfed_figs.md``.
"""

from __future__ import annotations

from .rfed_common import real_kpca_experiment

__all__ = ["EXPERIMENT", "make_config"]

EXPERIMENT = real_kpca_experiment(5, data="iris", label="Iris", d=4, r=2, total=150, preprocess="center",
                                  data_source="Iris (150 x 4), scikit-learn's bundled copy, centred",
                                  scaling="centring")
make_config = EXPERIMENT.make_config
