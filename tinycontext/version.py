"""The package version, in a module of its own: adapters read it without importing the
package's public API (tinycontext/__init__ names the composition, which imports adapters)."""

__version__ = "0.1.0"
