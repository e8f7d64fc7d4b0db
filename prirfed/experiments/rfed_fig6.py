"""``rfed-fig6``: Figure 6 of 002 (Section 5.3), kPCA (3) on the Wine data set (d = 13, r = 5).

002 Section 5.3 is quoted in :mod:`prirfed.experiments.rfed_fig5` (Figures 5 and 6 share the text:
10 random initializations, 10 agents, k = 5, RFedSVRG decreases the gradient norm and the principal
angles while the other two are not as efficient). Caption of Figure 6: "The data is in R^{13}
(d = 13) and we take r = 5."

Our choices are those of Figure 5 (:func:`prirfed.experiments.rfed_common.real_kpca_experiment`),
except the preprocessing: records standardised (centred, unit variance per feature: the 13
features differ in scale by 10^4, so without scaling the top directions are those of the
largest-unit features alone). Data: scikit-learn's bundled Wine (002's [10]); 178 records split
into agents of 18 or 17. Modes as Figure 5. Proofs note: ``proofs_notes/experiment_rfed_figs.md``.
"""

from __future__ import annotations

from .rfed_common import real_kpca_experiment

__all__ = ["EXPERIMENT", "make_config"]

EXPERIMENT = real_kpca_experiment(6, data="wine", label="Wine", d=13, r=5, total=178, preprocess="standardize",
                                  data_source="Wine (178 x 13), scikit-learn's bundled copy, standardised",
                                  scaling="standardising")
make_config = EXPERIMENT.make_config
