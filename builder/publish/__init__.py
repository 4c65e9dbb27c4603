"""Publishing a run as a Hugging Face dataset: layout, card, upload.

`build_dataset_folder` (layout.py) writes the folder with its card (card.py); `upload`
(upload.py) pushes it to the Hub, resumably; `publish` (command.py) is the CLI command.
"""

from builder.publish.layout import DEFAULT_SPLITS, LayoutSummary, build_dataset_folder, split_of
from builder.publish.upload import UploadReport, upload

__all__ = [
    "DEFAULT_SPLITS",
    "LayoutSummary",
    "UploadReport",
    "build_dataset_folder",
    "split_of",
    "upload",
]
