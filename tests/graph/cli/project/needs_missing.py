import not_an_installed_package  # noqa: F401
