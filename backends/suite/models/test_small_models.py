"""Small real architectures built from code (no weights downloaded): the op mixes and
fusions a backend meets in practice, beyond single operators."""

import torch


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = torch.nn.Sequential(
            torch.nn.Linear(32, 64), torch.nn.GELU(), torch.nn.Linear(64, 64),
            torch.nn.ReLU(), torch.nn.Linear(64, 10),
        )

    def forward(self, x):
        return torch.log_softmax(self.layers(x), dim=-1)


class SmallCNN(torch.nn.Module):
    """conv-bn-relu blocks, a depthwise conv, pooling and a classifier head."""

    def __init__(self):
        super().__init__()
        self.features = torch.nn.Sequential(
            torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.BatchNorm2d(16), torch.nn.ReLU(),
            torch.nn.Conv2d(16, 16, 3, padding=1, groups=16), torch.nn.BatchNorm2d(16),
            torch.nn.Hardswish(), torch.nn.MaxPool2d(2),
            torch.nn.Conv2d(16, 32, 1), torch.nn.ReLU(),
        )
        self.head = torch.nn.Linear(32, 10)

    def forward(self, x):
        return self.head(self.features(x).mean(dim=(2, 3)))


class ResidualBlock(torch.nn.Module):
    def __init__(self, channels=8):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(channels, channels, 3, padding=1)
        self.conv2 = torch.nn.Conv2d(channels, channels, 3, padding=1)

    def forward(self, x):
        return torch.relu(x + self.conv2(torch.relu(self.conv1(x))))


class TinyTransformerEncoder(torch.nn.Module):
    """One pre-norm encoder layer: attention, layer norm, feed-forward, residuals."""

    def __init__(self, dim=32, heads=4):
        super().__init__()
        self.layer = torch.nn.TransformerEncoderLayer(
            d_model=dim, nhead=heads, dim_feedforward=64, dropout=0.0,
            batch_first=True, norm_first=True,
        )

    def forward(self, x):
        return self.layer(x)


class TinyGRUClassifier(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embedding = torch.nn.Embedding(50, 16)
        self.gru = torch.nn.GRU(16, 24, batch_first=True)
        self.head = torch.nn.Linear(24, 3)

    def forward(self, tokens):
        output, _ = self.gru(self.embedding(tokens))
        return self.head(output[:, -1])


def test_mlp(test_runner):
    test_runner.lower_and_run_model(MLP(), (torch.randn(4, 32),))


def test_small_cnn(test_runner):
    test_runner.lower_and_run_model(SmallCNN(), (torch.randn(1, 3, 16, 16),))


def test_residual_block(test_runner):
    test_runner.lower_and_run_model(ResidualBlock(), (torch.randn(1, 8, 8, 8),))


def test_tiny_transformer_encoder(test_runner):
    test_runner.lower_and_run_model(TinyTransformerEncoder(), (torch.randn(2, 6, 32),))


def test_tiny_gru_classifier(test_runner):
    test_runner.lower_and_run_model(TinyGRUClassifier(), (torch.randint(0, 50, (2, 7)),))
