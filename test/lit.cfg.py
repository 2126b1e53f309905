# lit configuration for Cairn's regression tests.
import os

import lit.formats
import lit.util
from lit.llvm import llvm_config

config.name = "Cairn"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".cairn", ".test"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "unit", "Inputs",
                   "reference", "fuzz"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.cairn_obj_root, "test")

# Debian also installs llvm-14; its FileCheck must not win.
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.cairn_tools_dir, append_path=True)
llvm_config.use_default_substitutions()

# cuda-backend: `cairn build --target cuda` can build executables (CAIRN_ENABLE_CUDA).
# cuda-device: this machine has an NVIDIA GPU, so those executables do not stop at
# "no CUDA device".
if lit.util.pythonize_bool(getattr(config, "cairn_enable_cuda", "OFF")):
    config.available_features.add("cuda-backend")
if os.path.exists("/dev/nvidia0") or os.path.exists("/dev/nvidiactl"):
    config.available_features.add("cuda-device")

config.substitutions.append(("%examples", os.path.join(config.cairn_src_root, "examples")))
llvm_config.add_tool_substitutions(["cairn", "cairn-opt"], [config.cairn_tools_dir])
