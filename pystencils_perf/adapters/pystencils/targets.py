"""Which pystencils GPU target a kernel is generated for: the device's vendor decides.

pystencils 2.x generates CUDA (``Target.CUDA``) for NVIDIA GPUs and HIP
(``Target.HIP``) for AMD GPUs; a kernel chosen for an AMD device must be HIP
code, or it could not run there. A configuration that asks for the other
vendor's target is refused rather than silently retargeted.
"""

from __future__ import annotations

from ...errors import ConfigurationError
from ...vendors import VENDORS


def target_name(target) -> str:
    """A pystencils target as users write it: ``Target.CPU``, not the private ``Target._CPU`` it prints as."""
    names = [name for name, member in type(target).__members__.items() if member == target and not name.startswith("_")]
    return f"Target.{min(names, key=len)}" if names else str(target)


def target_for(device):
    """The pystencils target of `device`'s kernels: HIP for AMD GPUs, CUDA for NVIDIA GPUs."""
    import pystencils as ps

    vendor = VENDORS.get(device.vendor)
    if vendor is None:
        raise ConfigurationError(
            f"{device.name} is a GPU of vendor {device.vendor!r}: pystencils-perf generates "
            f"kernels for {' and '.join(v.name for v in VENDORS.values())} GPUs only"
        )
    return getattr(ps.Target, vendor.runtime)


def gpu_targets() -> tuple:
    """The GPU targets pystencils-perf generates: CUDA and HIP."""
    import pystencils as ps

    return tuple(getattr(ps.Target, vendor.runtime) for vendor in VENDORS.values())


def gpu_config(config, device=None):
    """A copy of `config` (a pystencils ``CreateKernelConfig``, or None) that targets `device`'s GPU.

    The target follows the device (`target_for`), and its warp size is the
    device's where the configuration names none (AMD's CDNA GPUs have 64-wide
    wavefronts, which pystencils cannot know). Without a device, a CUDA or HIP
    target is kept and anything else becomes CUDA. A CPU target, or the other
    vendor's GPU target, is refused: pystencils-perf chooses GPU launches for
    the device it is given.
    """
    import pystencils as ps

    if config is not None and not isinstance(config, ps.CreateKernelConfig):  # else: "'str' has no attribute 'copy'"
        raise ConfigurationError(
            f"config must be a pystencils CreateKernelConfig or None, got the "
            f"{type(config).__name__} {config!r:.40}: the device is the keyword argument "
            "device=..., and the kernel's target follows it"
        )
    cfg = ps.CreateKernelConfig() if config is None else config.copy()
    asked = cfg.target
    if asked is not None and not asked.is_gpu():
        raise ConfigurationError(
            f"the CreateKernelConfig targets {target_name(asked)}, not a GPU: pystencils-perf "
            "chooses GPU launches; leave the target out or set target=Target.CUDA or Target.HIP"
        )
    if device is None:
        cfg.target = asked if asked in gpu_targets() else ps.Target.CUDA
        return cfg
    wanted = target_for(device)
    if asked is not None and not asked.is_automatic() and asked != wanted:
        raise ConfigurationError(
            f"the CreateKernelConfig targets {target_name(asked)}, but {device.name} is an {VENDORS[device.vendor].name} "
            f"GPU, which runs {target_name(wanted)} kernels: leave the target out or set target={target_name(wanted)}"
        )
    cfg.target = wanted
    if cfg.gpu.warp_size is None:
        cfg.gpu.warp_size = device.warp_size
    return cfg
