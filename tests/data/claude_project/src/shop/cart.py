"""A shopping cart: items with prices in cents."""


class Cart:
    def __init__(self) -> None:
        self.items: dict[str, int] = {}

    def add(self, name: str, cents: int) -> None:
        self.items[name] = cents

    def total(self) -> int:
        return sum(self.items.values())
