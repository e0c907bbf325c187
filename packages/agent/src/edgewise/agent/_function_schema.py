"""Function schemas under the private module name pydantic-ai gives them (code importing `function_schema` or
`FunctionSchema` from there keeps working); they live in `_functions.schema`."""

from ._functions.schema import (
    FunctionSchema,
    GenerateToolJsonSchema,
    _extract_return_schema_type,  # pyright: ignore[reportPrivateUsage]
    _takes_ctx,  # pyright: ignore[reportPrivateUsage]
    function_schema,
)

__all__ = ('FunctionSchema', 'GenerateToolJsonSchema', '_extract_return_schema_type', '_takes_ctx', 'function_schema')
