"""What a server process serves: one store (single-user) or one store per proven user (hosted
mode: a SQLite file each, or a tenant each in one PostgreSQL database), all sharing one
embedding model and one token vocabulary. The settings it is opened with are validated in
tinycontext.hosted.settings.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tinycontext.config.engine import TinyContextConfig
from tinycontext.hosted.settings import HostedConfigError, ServerSettings

if TYPE_CHECKING:
    from tinycontext.adapters.hosting.tenancy import Access
    from tinycontext.app.management import Management
    from tinycontext.app.service_source import Services
    from tinycontext.hosted.parts import ProcessParts

__all__ = ["Serving", "open_serving"]


@dataclass
class Serving:
    """What one server process serves, and how its callers are identified."""

    services: Services  # one service (single-user) or one per proven user (hosted)
    access: Access | None = None
    management: Management | None = None
    hosted: bool = False
    allowed_hosts: str = ""  # TINYCONTEXT_ALLOWED_HOSTS

    def hosts(self, bind_host: str | None) -> list[str] | None:
        """Host-header allow-list. Hosted mode proves callers by proxy address and token, so
        the DNS-rebinding check is only on when TINYCONTEXT_ALLOWED_HOSTS names hosts."""
        from tinycontext.config.allowed_hosts import allowed_hosts

        if self.hosted and not self.allowed_hosts.strip():
            return None
        return allowed_hosts(bind_host, self.allowed_hosts)

    def close(self) -> None:
        self.services.close()


def open_serving(
    config: TinyContextConfig, settings: ServerSettings, parts: ProcessParts
) -> Serving:
    """The one service (single-user) or the per-user TenantStores (hosted) a server serves,
    from the process's parts (tinycontext.entry.container.process_parts)."""
    from tinycontext.adapters.hosting.tenancy import Access, ProxyTrust
    from tinycontext.app.management import Management

    parts.key_material(config)  # a bad key or a missing extra stops start-up, not a request
    token = settings.management_token
    if not settings.tenancy:
        services = parts.single()
        management = Management(hosted=False) if settings.management else None
        access = Access(management_token=token) if settings.management else None
        return Serving(services, access, management, allowed_hosts=settings.allowed_hosts)
    if bool(config.store_url) != settings.postgres:
        # The settings were validated for the other backend (a caller passed another
        # store_url): refuse rather than serve without the checks that backend needs.
        raise HostedConfigError(
            "hosted mode settings were validated for "
            f"{'PostgreSQL' if settings.postgres else 'SQLite'} but the store is "
            f"{'PostgreSQL' if config.store_url else 'SQLite'}; pass the config's store_url "
            "to load_server_settings."
        )
    from tinycontext.hosted.stores import open_tenants

    stores = open_tenants(config, settings, parts)
    trust = ProxyTrust(settings.networks, settings.proxy_token, settings.user_header)
    management = Management(hosted=True, storage=stores.storage_facts) if settings.management \
        else None
    return Serving(stores, Access(trust, token), management, hosted=True,
                   allowed_hosts=settings.allowed_hosts)
