"""A variational autoencoder on the bundled 8x8 digits, written as pytorch/examples' ``vae/main.py``.

Apart from the imports, this is a PyTorch script: the encoder ``fc1`` -> (``fc21``, ``fc22``) gives
the mean and log-variance of the latent code, ``reparameterize`` samples it differentiably, the
decoder ``fc3`` -> ``fc4`` reconstructs the pixels, and the loss is the summed binary cross entropy
plus the KL divergence from the unit normal, minimised with Adam.

    python examples/vae.py --epochs 10
"""
import argparse

import retrograd as torch
from retrograd import nn, optim
from retrograd.data import load_digits
from retrograd.nn import functional as F
from retrograd.utils.data import DataLoader, TensorDataset

PIXELS, HIDDEN, LATENT = 64, 128, 8


class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(PIXELS, HIDDEN)
        self.fc21 = nn.Linear(HIDDEN, LATENT)
        self.fc22 = nn.Linear(HIDDEN, LATENT)
        self.fc3 = nn.Linear(LATENT, HIDDEN)
        self.fc4 = nn.Linear(HIDDEN, PIXELS)

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar):
        std = torch.exp(0.5 * logvar)
        eps = torch.randn_like(std)
        return mu + eps * std

    def decode(self, z):
        h3 = F.relu(self.fc3(z))
        return torch.sigmoid(self.fc4(h3))

    def forward(self, x):
        mu, logvar = self.encode(x.view(-1, PIXELS))
        z = self.reparameterize(mu, logvar)
        return self.decode(z), mu, logvar


def loss_function(recon_x, x, mu, logvar):
    """Reconstruction (summed binary cross entropy) plus KL(N(mu, exp(logvar)) || N(0, 1)), summed."""
    BCE = F.binary_cross_entropy(recon_x, x.view(-1, PIXELS), reduction="sum")
    KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    return BCE + KLD


def digits(dtype=torch.float32):
    """``(train, test)`` TensorDatasets of the digits as rows of 64 pixels in [0, 1]."""
    images, _ = load_digits(as_tensors=False)
    x = torch.tensor(images.reshape(-1, PIXELS) / 16.0, dtype=dtype)
    return TensorDataset(x[:1500]), TensorDataset(x[1500:])


def train(model, optimizer, loader, epoch, log_interval=0):
    """One epoch over ``loader``; returns the average loss per image."""
    model.train()
    train_loss = 0.0
    for batch_idx, (data,) in enumerate(loader):
        optimizer.zero_grad()
        recon_batch, mu, logvar = model(data)
        loss = loss_function(recon_batch, data, mu, logvar)
        loss.backward()
        train_loss += loss.item()
        optimizer.step()
        if log_interval and batch_idx % log_interval == 0:
            print(f"Train Epoch: {epoch} [{batch_idx * len(data)}/{len(loader.dataset)}]\tLoss: "
                  f"{loss.item() / len(data):.6f}")
    return train_loss / len(loader.dataset)


def test(model, loader):
    """The average loss per image over ``loader``, without gradients."""
    model.eval()
    test_loss = 0.0
    with torch.no_grad():
        for (data,) in loader:
            recon_batch, mu, logvar = model(data)
            test_loss += loss_function(recon_batch, data, mu, logvar).item()
    return test_loss / len(loader.dataset)


def ascii_digit(pixels):
    """An 8x8 image in [0, 1] as eight lines of characters."""
    shades = " .:-=+*#"
    rows = pixels.view(8, 8).tolist()
    return "\n".join("".join(shades[min(int(v * len(shades)), len(shades) - 1)] for v in row) for row in rows)


def main(argv=None):
    parser = argparse.ArgumentParser(description="VAE on the 8x8 digits")
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--log-interval", type=int, default=5)
    args = parser.parse_args(argv)

    torch.manual_seed(args.seed)
    train_set, test_set = digits()
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True)
    test_loader = DataLoader(test_set, batch_size=args.batch_size, shuffle=False)
    model = VAE()
    optimizer = optim.Adam(model.parameters(), lr=args.lr)
    for epoch in range(1, args.epochs + 1):
        avg = train(model, optimizer, train_loader, epoch, args.log_interval)
        print(f"====> Epoch: {epoch} Average loss: {avg:.4f}")
        print(f"====> Test set loss: {test(model, test_loader):.4f}")
    with torch.no_grad():
        sample = model.decode(torch.randn(1, LATENT))
    print("A digit decoded from a random code:")
    print(ascii_digit(sample[0]))
    return model


if __name__ == "__main__":
    main()
