"""Static files with their content's hash in their names, compressed, cached for a year.

`collectstatic` (run by config.devstack before the web server starts, and by the image
build) writes each file as `name.<hash>.ext` with gzip beside it, and a manifest. WhiteNoise
serves a hashed name with `Cache-Control: max-age=315360000, immutable`, so a returning visitor
asks again only for pages and data. Hashed names are used whenever the manifest exists, in
DEBUG too; without one (a checkout where collectstatic never ran) the plain names are
served from the apps' folders as before.
"""

from __future__ import annotations

from django.core.files.storage import FileSystemStorage
from whitenoise.storage import CompressedManifestStaticFilesStorage


class StaticStorage(CompressedManifestStaticFilesStorage):
    # A file added after the last collectstatic gets its plain name instead of failing a page.
    manifest_strict = False

    def url(self, name: str | None, force: bool = False) -> str:
        if not self.hashed_files or name is None:
            return FileSystemStorage.url(self, name)
        try:
            return super().url(name, force=True)
        except ValueError:
            return FileSystemStorage.url(self, name)
