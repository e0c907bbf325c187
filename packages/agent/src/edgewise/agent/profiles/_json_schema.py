"""JSON schema transformers: walk a tool's or an output's schema and rewrite it for one model family."""

from __future__ import annotations as _annotations

import copy
from abc import ABC, abstractmethod
from typing import Any, Literal, TypeAlias

from ..exceptions import UserError

__all__ = ('JsonSchema', 'JsonSchemaTransformer', 'InlineDefsJsonSchemaTransformer')

JsonSchema: TypeAlias = dict[str, Any]
"""A JSON schema, as a dict."""

_DEFS_PREFIX = '#/$defs/'


def _def_key(ref: str) -> str:
    return ref[len(_DEFS_PREFIX) :] if ref.startswith(_DEFS_PREFIX) else ref


class JsonSchemaTransformer(ABC):
    """Walks a JSON schema bottom-up and calls `transform` on every sub-schema (objects, arrays, unions, `$defs`).

    Subclasses implement `transform`; `walk()` returns the transformed copy (the input is never modified).
    After `walk()`, `is_strict_compatible` says whether the schema can be sent in the provider's strict mode.
    """

    def __init__(
        self,
        schema: JsonSchema,
        *,
        strict: bool | None = None,
        prefer_inlined_defs: bool = False,
        simplify_nullable_unions: bool = False,
    ) -> None:
        """Prepare a walk over `schema`.

        Args:
            schema: The schema to transform.
            strict: `True` to force the schema into the provider's strict dialect, `False` to leave it loose,
                `None` to keep it as it is and only find out whether it could be strict.
            prefer_inlined_defs: Replace `$ref`s by the definitions they point to (recursive ones stay refs).
            simplify_nullable_unions: Accepted for compatibility; no longer used.
        """
        self.schema = schema
        """The schema being transformed (not modified)."""
        self.strict = strict
        """Whether the schema is forced into (`True`) or kept out of (`False`) the strict dialect."""
        self.is_strict_compatible = True
        """Whether the transformed schema can be used in strict mode; known after `walk()`."""
        self.prefer_inlined_defs = prefer_inlined_defs
        """Whether `$ref`s are replaced by their definitions."""
        self.simplify_nullable_unions = simplify_nullable_unions
        """Unused; kept for compatibility."""
        self.defs: dict[str, JsonSchema] = copy.deepcopy(schema.get('$defs', {}))
        """The schema's `$defs`, by name."""
        self.refs_stack: list[str] = []
        """The definitions being inlined, outermost first (to spot recursion)."""
        self.recursive_refs: set[str] = set()
        """Definitions found to be recursive, which stay as `$ref`s."""

    @abstractmethod
    def transform(self, schema: JsonSchema) -> JsonSchema:
        """Rewrite one sub-schema (its children are already transformed); may modify and return it."""
        raise NotImplementedError

    def walk(self) -> JsonSchema:
        """The transformed schema."""
        root = copy.deepcopy(self.schema)
        root.pop('$defs', None)
        walked = self._visit(root)
        assert isinstance(walked, dict)
        if self.defs and not self.prefer_inlined_defs:
            walked['$defs'] = {name: self._visit(sub) for name, sub in self.defs.items()}
            return walked
        if self.recursive_refs:
            # Recursive definitions cannot be inlined: keep those, and make the root a definition too.
            kept = {name: self.defs[name] for name in self.recursive_refs}
            root_ref = self.schema.get('$ref')
            root_name = _def_key(root_ref) if isinstance(root_ref, str) else self.schema.get('title', 'root')
            while root_ref is None and root_name in kept:
                root_name = f'{root_name}_root'
            kept[root_name] = walked
            return {'$defs': kept, '$ref': f'{_DEFS_PREFIX}{root_name}'}
        return walked

    def _visit(self, node: JsonSchema | bool) -> JsonSchema | bool:
        if isinstance(node, bool):
            return node
        inlined = 0
        if self.prefer_inlined_defs:
            while isinstance(ref := node.get('$ref'), str):
                name = _def_key(ref)
                if name in self.recursive_refs:
                    break
                if name in self.refs_stack:
                    self.recursive_refs.add(name)
                    break
                target = self.defs.get(name)
                if target is None:
                    raise UserError(f'Could not find $ref definition for {name}')
                self.refs_stack.append(name)
                inlined += 1
                siblings = {k: v for k, v in node.items() if k != '$ref'}
                node = {**copy.deepcopy(target), **siblings}
        kind = node.get('type')
        if kind == 'object':
            self._visit_object(node)
        elif kind == 'array':
            self._visit_array(node)
        elif kind is None:
            node = self._visit_union(node, 'anyOf')
            node = self._visit_union(node, 'oneOf')
        node = self.transform(node)
        if inlined:
            del self.refs_stack[-inlined:]
        return node

    def _visit_object(self, node: JsonSchema) -> None:
        for key in ('properties', 'patternProperties'):
            if isinstance(members := node.get(key), dict):
                node[key] = {name: self._visit(sub) for name, sub in members.items()}
        if isinstance(extra := node.get('additionalProperties'), dict):
            node['additionalProperties'] = self._visit(extra)

    def _visit_array(self, node: JsonSchema) -> None:
        if isinstance(prefix := node.get('prefixItems'), list):
            node['prefixItems'] = [self._visit(sub) for sub in prefix]
        if isinstance(items := node.get('items'), dict | bool):
            node['items'] = self._visit(items)

    def _visit_union(self, node: JsonSchema, key: Literal['anyOf', 'oneOf']) -> JsonSchema:
        members = node.get(key)
        if not isinstance(members, list):
            return node
        rest = {k: v for k, v in node.items() if k != key}
        visited = [self._visit(sub) for sub in members]
        if len(visited) == 1 and isinstance(visited[0], dict):
            # A union of one is that member (with the union's own keywords, e.g. a description).
            return {**visited[0], **rest}
        return {**rest, key: visited}


class InlineDefsJsonSchemaTransformer(JsonSchemaTransformer):
    """Replaces every non-recursive `$ref` with the definition it points to, for APIs that reject `$defs`."""

    def __init__(self, schema: JsonSchema, *, strict: bool | None = None) -> None:
        """Prepare a walk over `schema` that inlines its definitions."""
        super().__init__(schema, strict=strict, prefer_inlined_defs=True)

    def transform(self, schema: JsonSchema) -> JsonSchema:
        """Leaves each sub-schema as it is: the inlining is done by the walk."""
        return schema
