"""The checks test.sh runs, in pytest style but on unittest alone: the
sandbox image has no pytest, and installing it would need the network.

Exit status 0 when every check passes; test.sh turns that into the reward.
"""

import sys
import unittest
from pathlib import Path

# Run as a script, so this file's folder (/tests) is on sys.path already.
from verifier import expected_count, load_report

APP = Path("/app")


class ReportTests(unittest.TestCase):
    def test_report_exists(self):
        self.assertTrue((APP / "report.json").is_file(), "report.json is missing")

    def test_status_is_ok(self):
        self.assertEqual(load_report(APP).get("status"), "ok")

    def test_count_matches_items(self):
        self.assertEqual(load_report(APP).get("count"), expected_count(APP))


if __name__ == "__main__":
    result = unittest.main(exit=False, verbosity=2).result
    sys.exit(0 if result.wasSuccessful() else 1)
