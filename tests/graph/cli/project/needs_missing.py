import not_an_installed_package  # type: ignore[import-not-found]  # noqa: F401
