# Type stubs for the fanjian extension module (python/fanjianmodule.c).
import os
from types import ModuleType, TracebackType
from typing import Any, Literal, NamedTuple, Optional, Type, TypeVar, Union

__version__: str
DEFAULT_DICT: str

_Path = Union[str, bytes, os.PathLike[str], os.PathLike[bytes]]
_Quotes = Optional[Literal["tw", "hk", "cn", "keep"]]
# convert() gives a str for a str and bytes for (UTF-8) bytes.
_Text = TypeVar("_Text", str, bytes)

class DictionaryError(OSError): ...

class Span(NamedTuple):
    start: int
    end: int
    script: Literal["simplified", "traditional"]

class Detection(NamedTuple):
    script: Literal["none", "simplified", "traditional", "both", "mixed", "binary"]
    confidence: float
    han: int
    simplified: int
    traditional: int
    spans: list[Span]
    damage: Optional[float]

def convert(
    text: _Text,
    profile: Optional[str] = None,
    *,
    compat: bool = False,
    quotes: _Quotes = None,
    punct: bool = False,
    dict: Optional[_Path] = None,
    repair: Literal["auto", "careful", "thorough", "off"] = "auto",
    to: Optional[Literal["tw", "twp", "hk", "hkp", "hant", "cn", "hans"]] = None,
) -> _Text: ...
def detect(text: str, *, dict: Optional[_Path] = None) -> Detection: ...
def profiles(*, dict: Optional[_Path] = None) -> list[str]: ...
def clean(text: str, rules: Optional[str] = None, *, dict: Optional[_Path] = None) -> str: ...
def convert_file(
    src: _Path,
    dst: _Path,
    profile: Optional[str] = "s2t",
    *,
    format: Optional[str] = None,
    from_encoding: Optional[str] = None,
    to_encoding: Optional[str] = None,
    lossy: bool = False,
    clean: bool = False,
    compat: bool = False,
    quotes: Optional[Literal["tw", "hk", "cn", "keep"]] = None,
    punct: bool = False,
    repair: Optional[Literal["auto", "careful", "thorough", "off"]] = "auto",
    to: Optional[str] = None,
    dict: Optional[_Path] = None,
) -> None: ...
def convert_bytes(
    data: bytes,
    profile: Optional[str] = "s2t",
    *,
    encoding: Optional[str] = None,
    format: Optional[str] = "text",
    to_encoding: Optional[str] = None,
    lossy: bool = False,
    clean: bool = False,
    compat: bool = False,
    quotes: Optional[Literal["tw", "hk", "cn", "keep"]] = None,
    punct: bool = False,
    repair: Optional[Literal["auto", "careful", "thorough", "off"]] = "auto",
    to: Optional[str] = None,
    dict: Optional[_Path] = None,
) -> bytes: ...

class Converter:
    def __init__(
        self,
        profile: Optional[str] = None,
        *,
        compat: bool = False,
        quotes: _Quotes = None,
        punct: bool = False,
        dict: Optional[_Path] = None,
        repair: Literal["auto", "careful", "thorough", "off"] = "auto",
        to: Optional[Literal["tw", "twp", "hk", "hkp", "hant", "cn", "hans"]] = None,
    ) -> None: ...
    def convert(self, text: _Text, /) -> _Text: ...
    def inspect(self, text: _Text, /) -> list[dict[str, Any]]: ...
    def close(self) -> None: ...
    def stream(self) -> "Stream": ...
    def __enter__(self) -> "Converter": ...
    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        tb: Optional[TracebackType],
    ) -> None: ...
    @property
    def profile(self) -> str: ...
    @property
    def compat(self) -> bool: ...
    @property
    def repair(self) -> Literal["careful", "thorough"]: ...
    @property
    def quotes(self) -> Literal["tw", "cn", "keep"]: ...
    @property
    def punct(self) -> bool: ...
    @property
    def closed(self) -> bool: ...
    @property
    def dict_path(self) -> str: ...

class Stream:
    def feed(self, text: str, /) -> str: ...
    def finish(self) -> str: ...

class OpenCC(Converter):
    def __init__(
        self,
        config: Optional[str] = "t2s",
        *,
        conversion: Optional[str] = None,
        dict: Optional[_Path] = None,
        compat: bool = True,
    ) -> None: ...
    # A str for str or UTF-8 bytes, as the `opencc` package's convert().
    def convert(self, text: Union[str, bytes], /) -> str: ...  # type: ignore[override]
    def set_conversion(self, conversion: str, /) -> None: ...
    @property
    def config(self) -> str: ...
    @property
    def conversion(self) -> str: ...

opencc: ModuleType
