"""python/tutorials.py changes only the import lines."""

import importlib.util
import os
import unittest

# Loaded from its path: putting python/ on sys.path would shadow the
# installed package with the source folder.
_spec = importlib.util.spec_from_file_location(
    "tutorials", os.path.join(os.path.dirname(__file__), "..", "tutorials.py"))
tutorials = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tutorials)


class RewriteTest(unittest.TestCase):

    def test_imports_only(self):
        src = "\n".join([
            "import torch",
            "import triton",
            "import triton.language as tl",
            "from triton.tools.tensor_descriptor import TensorDescriptor",
            "from triton.runtime import driver",
            "    import triton.profiler.viewer as proton_viewer",
            "import triton.language",
            "x = 'import triton'",
            "import tritonclient",
            "",
        ])
        text, changed = tutorials.rewrite(src)
        self.assertEqual(text.splitlines(), [
            "import torch",
            "import tawa as triton",
            "import tawa.language as tl",
            "from tawa.tools.tensor_descriptor import TensorDescriptor",
            "from tawa.runtime import driver",
            "    import tawa.profiler.viewer as proton_viewer",
            "import tawa.language; import tawa as triton",
            "x = 'import triton'",
            "import tritonclient",
        ])
        self.assertEqual([i for i, _, _ in changed], [2, 3, 4, 5, 6, 7])
        self.assertTrue(text.endswith("\n"))


if __name__ == "__main__":
    unittest.main()
