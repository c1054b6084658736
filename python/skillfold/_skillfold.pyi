"""Type stubs of the native module (bindings/python)."""

from os import PathLike
from typing import Any, Callable, Iterable, Literal, Mapping, Optional, Sequence, Tuple, TypedDict, Union

__version__: str

JSON = Any
Approval = Union[Tuple[str, str, str], Mapping[str, str]]
ToolFormat = Literal["openai", "openai-responses", "anthropic", "mcp"]

class Access(TypedDict):
    """What the policy callable is asked about."""
    agent: Optional[str]
    tool: str
    skill: str
    pinned: bool
    version: Optional[str]
    hash: Optional[str]
    reference: Optional[str]

Policy = Callable[[Access], Union[None, bool, str]]

class Refused(TypedDict):
    """A bundle that did not verify (never served)."""
    name: str
    location: str
    code: str
    reason: str
    details: list[str]
    transient: bool

class SkillInfo(TypedDict):
    name: str
    version: str
    hash: str
    description: str

class Problem(TypedDict):
    code: str
    location: Optional[str]
    message: str

class SkillfoldError(Exception):
    """Base of every skillfold error."""
    code: str
    message: str

class ConfigurationError(SkillfoldError):
    problems: list[Problem]

class CatalogueError(SkillfoldError): ...

class ToolError(SkillfoldError):
    error: dict[str, JSON]

class PolicyError(SkillfoldError): ...

class Catalogue:
    """One agent's verified skills and the tools that serve them."""
    @property
    def agent(self) -> Optional[str]: ...
    def skills(self) -> list[SkillInfo]: ...
    def prompt(self) -> Optional[str]: ...
    def tools(self, format: ToolFormat = "openai") -> list[dict[str, JSON]]: ...
    def call(self, tool: str, arguments: Union[dict[str, JSON], str]) -> Tuple[dict[str, JSON], dict[str, JSON]]: ...

class Runtime:
    """Verified skills loaded from a descriptor or a builder."""
    @staticmethod
    def load(path: Union[str, PathLike[str]]) -> Runtime: ...
    @staticmethod
    def builder() -> RuntimeBuilder: ...
    def catalogue(self, agent: Optional[str] = None) -> Catalogue: ...
    @property
    def agents(self) -> list[str]: ...
    @property
    def refused(self) -> list[Refused]: ...

class AgentBuilder:
    def local(self, name: str, version: str, directory: Union[str, PathLike[str]], hash: str) -> AgentBuilder: ...
    def git_corpus(
        self,
        source: str,
        revision: str,
        directory: Union[str, PathLike[str]],
        approved: Iterable[Approval],
        root: Optional[str] = None,
        limits: Optional[str] = None,
    ) -> AgentBuilder: ...

class RuntimeBuilder:
    def base(self, base: Union[str, PathLike[str]]) -> RuntimeBuilder: ...
    def local(self, name: str, version: str, directory: Union[str, PathLike[str]], hash: str) -> RuntimeBuilder: ...
    def git_corpus(
        self,
        source: str,
        revision: str,
        directory: Union[str, PathLike[str]],
        approved: Iterable[Approval],
        root: Optional[str] = None,
        limits: Optional[str] = None,
    ) -> RuntimeBuilder: ...
    def agent(self, name: str, extras: Callable[[AgentBuilder], Optional[AgentBuilder]]) -> RuntimeBuilder: ...
    def runner(self, approvals: Sequence[Mapping[str, str]]) -> RuntimeBuilder: ...
    def policy(self, callable: Policy) -> RuntimeBuilder: ...
    def build(self) -> Runtime: ...
