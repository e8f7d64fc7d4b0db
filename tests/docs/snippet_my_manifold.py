# test_my_manifold.py: your manifold class checked by prirfed's property suites (run it with pytest)
from prirfed.reference.manifolds.sphere import Sphere
from prirfed.testing.manifold_contract import ManifoldContract, VerifiedEquivalence


class MySphere(Sphere):
    """Stand-in for your implementation: here prirfed's sphere with your own transport."""

    def transp(self, x, y, v):
        # parallel transport along the great circle, log-free form
        return v - (y @ v) / (1.0 + x @ y) * (x + y)


class TestMySphere(ManifoldContract):   # every identity of the Manifold contract
    manifold = MySphere(3)


class TestMySphereEqualsReference(VerifiedEquivalence):   # equal to prirfed's sphere
    reference = Sphere(6)
    verified = MySphere(6)
    batched = False   # MySphere has no batched kernels (exp_batch, ...)

    def small_radius(self, x):
        return 3.0
