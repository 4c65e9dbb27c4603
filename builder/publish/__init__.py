"""Publishing a run as a Hugging Face dataset: layout, card, upload.

`build_dataset_folder` (layout.py) writes the folder; `upload` (upload.py) pushes it to the Hub.
"""

from builder.publish.layout import DEFAULT_SPLITS, LayoutSummary, build_dataset_folder, split_of

__all__ = ["DEFAULT_SPLITS", "LayoutSummary", "build_dataset_folder", "split_of"]
